import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each real rail's circuit, shared by every process: payouts are accepted by api processes but sent by workers, so
 * the api must see the failures the workers met. No row: closed, never called.
 */
export class RailHealth1763800000032 implements MigrationInterface {
  name = 'RailHealth1763800000032';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rail_health (
        rail text PRIMARY KEY,
        consecutive_failures integer NOT NULL DEFAULT 0,
        opened_at timestamptz,
        open_until timestamptz,
        last_success_at timestamptz,
        last_failure_at timestamptz,
        last_error text
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE rail_health`);
  }
}
