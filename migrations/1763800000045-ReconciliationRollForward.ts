import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance line as a roll-forward (issue 33): the operator's balance at an opening (the rail's previous complete
 * run, or an opening balance a person recorded) plus our movements that succeeded since, against the operator's
 * balance now. Openings a person sets are kept, with who set them and why; a run keeps which opening it rolled from
 * and what it added, so the line can be read back without recomputing it.
 */
export class ReconciliationRollForward1763800000045 implements MigrationInterface {
  name = 'ReconciliationRollForward1763800000045';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconciliation_openings (
        id         bigserial PRIMARY KEY,
        rail       text NOT NULL,
        amount     numeric(20,4) NOT NULL,
        currency   char(3) NOT NULL,
        at         timestamptz NOT NULL,
        set_by     text NOT NULL,
        note       text,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX reconciliation_openings_rail_ix ON reconciliation_openings (rail, at DESC);

      ALTER TABLE reconciliation_runs RENAME COLUMN ledger_balance TO expected_balance;
      ALTER TABLE reconciliation_runs
        ADD COLUMN opening_balance  numeric(20,4),
        ADD COLUMN opening_at       timestamptz,
        -- Where the opening came from: 'run N' (that run's operator balance) or 'opening N' (set by a person).
        ADD COLUMN opening_source   text,
        -- Our movements that succeeded from the opening to the balance's instant: IN minus OUT.
        ADD COLUMN period_movements numeric(20,4);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE reconciliation_runs DROP COLUMN opening_balance, DROP COLUMN opening_at, DROP COLUMN opening_source,
        DROP COLUMN period_movements;
      ALTER TABLE reconciliation_runs RENAME COLUMN expected_balance TO ledger_balance;
      DROP TABLE reconciliation_openings;
    `);
  }
}
