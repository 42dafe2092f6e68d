import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed FX refreshes are counted per hour in the database, so the alert metric reads the same from any process's
 * /metrics, whichever worker's refresh failed.
 */
export class FxRefreshFailures1763800000030 implements MigrationInterface {
  name = 'FxRefreshFailures1763800000030';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE fx_refreshes ADD COLUMN failures integer NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE fx_refreshes DROP COLUMN failures`);
  }
}
