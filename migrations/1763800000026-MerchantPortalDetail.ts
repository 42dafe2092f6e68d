import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The merchant portal's overview counts days in the merchant's time zone (an IANA name Postgres knows), and its
 * delivery page shows what each callback attempt was answered (the start of the receiver's response body).
 */
export class MerchantPortalDetail1763800000026 implements MigrationInterface {
  name = 'MerchantPortalDetail1763800000026';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE clients ADD COLUMN time_zone varchar(64) NOT NULL DEFAULT 'UTC';
      ALTER TABLE callback_attempts ADD COLUMN response_body varchar(2000);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE callback_attempts DROP COLUMN response_body; ALTER TABLE clients DROP COLUMN time_zone;`);
  }
}
