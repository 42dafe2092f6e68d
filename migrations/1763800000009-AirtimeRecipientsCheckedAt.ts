import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the airtime provider was last asked about a recipient, so that the worker's reconciliation re-asks about
 * recipients left processing (601) or jammed (604) once that is longer ago than PAYOUT_RECONCILE_AFTER_MS (as
 * payouts.checked_at does for payouts). Recipients already waiting count from their last update.
 */
export class AirtimeRecipientsCheckedAt1763800000009 implements MigrationInterface {
  name = 'AirtimeRecipientsCheckedAt1763800000009';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE airtime_recipients ADD COLUMN checked_at timestamptz;
      UPDATE airtime_recipients SET checked_at = updated_at WHERE service_status <> 600;
      CREATE INDEX airtime_recipients_unresolved_idx ON airtime_recipients (checked_at) WHERE service_status IN (601, 604);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX airtime_recipients_unresolved_idx; ALTER TABLE airtime_recipients DROP COLUMN checked_at;`);
  }
}
