import { MigrationInterface, QueryRunner } from 'typeorm';

/** A top-up of one airtime recipient is a request to a real operator too (Africa's Talking), its subject the recipient. */
export class AirtimeRailRequests1763800000031 implements MigrationInterface {
  name = 'AirtimeRailRequests1763800000031';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE rail_requests DROP CONSTRAINT rail_requests_subject_kind_check;
      ALTER TABLE rail_requests ADD CONSTRAINT rail_requests_subject_kind_check
        CHECK (subject_kind IN ('PAYMENT', 'PAYOUT', 'REVERSAL', 'AIRTIME'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE rail_requests DROP CONSTRAINT rail_requests_subject_kind_check;
      ALTER TABLE rail_requests ADD CONSTRAINT rail_requests_subject_kind_check
        CHECK (subject_kind IN ('PAYMENT', 'PAYOUT', 'REVERSAL'));
    `);
  }
}
