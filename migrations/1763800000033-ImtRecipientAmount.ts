import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an IMT's recipient receives, as numbers the rail can send: recipient_amount in recipient_currency (the
 * request's destination_currency). The request JSON holds them too, but read back through JSON an amount is a float.
 * LOCAL and B2B pay their own amount and currency, so they leave both empty. IMTs already stored take them from their
 * request (jsonb keeps the number exactly), so one still in flight is sent like a new one.
 */
export class ImtRecipientAmount1763800000033 implements MigrationInterface {
  name = 'ImtRecipientAmount1763800000033';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE payouts
        ADD COLUMN recipient_amount numeric(20,4) CHECK (recipient_amount > 0),
        ADD COLUMN recipient_currency char(3)`);
    await q.query(`
      UPDATE payouts SET recipient_amount = (request->>'recipient_amount')::numeric,
        recipient_currency = request->>'destination_currency'
      WHERE kind = 'IMT'`);
    await q.query(`
      ALTER TABLE payouts ADD CONSTRAINT payouts_imt_recipient_check
        CHECK ((kind = 'IMT') = (recipient_amount IS NOT NULL) AND (recipient_amount IS NULL) = (recipient_currency IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE payouts DROP COLUMN recipient_amount, DROP COLUMN recipient_currency`);
  }
}
