import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation against the operators (issue 33): a run compares, for one rail and one period, what the operator
 * says it moved with what we hold, and keeps one row per operator row or movement of ours with its outcome. A
 * difference is keyed by (rail, outcome, reference), so running a period again finds the row it made before instead
 * of doubling it. Both tables sit on the coordinator (never written in a money transaction; a resolution's entry is
 * posted by the existing paths, then named here).
 */
export class Reconciliation1763800000043 implements MigrationInterface {
  name = 'Reconciliation1763800000043';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconciliation_runs (
        id                 bigserial PRIMARY KEY,
        rail               text NOT NULL,
        period_from        timestamptz NOT NULL,
        period_to          timestamptz NOT NULL CHECK (period_to > period_from),
        started_at         timestamptz NOT NULL DEFAULT now(),
        finished_at        timestamptz,
        -- RUNNING until it ends; INCOMPLETE when the operator could not answer (reason says why), never taken as matched.
        outcome            text NOT NULL DEFAULT 'RUNNING' CHECK (outcome IN ('RUNNING', 'COMPLETE', 'INCOMPLETE')),
        reason             text,
        started_by         text NOT NULL,
        -- Rows per outcome of this run, and those settled by our own status queries.
        counts             jsonb NOT NULL DEFAULT '{}',
        -- The balance line: the operator's balance against our clearing accounts' balance plus what is in flight.
        balance_currency   char(3),
        operator_balance   numeric(20,4),
        ledger_balance     numeric(20,4),
        in_flight          numeric(20,4),
        balance_difference numeric(20,4),
        balance_at         timestamptz,
        balance_evidence   jsonb
      );
      CREATE INDEX reconciliation_runs_rail_ix ON reconciliation_runs (rail, period_from DESC);

      CREATE TABLE reconciliation_rows (
        id                  bigserial PRIMARY KEY,
        rail                text NOT NULL,
        outcome             text NOT NULL CHECK (outcome IN ('MATCHED', 'MISSING_AT_US', 'MISSING_AT_OPERATOR', 'AMOUNT_MISMATCH',
                                                             'STATUS_MISMATCH', 'DUPLICATE_AT_OPERATOR')),
        -- What keeps a rerun from doubling the row: our record for a row of ours, the operator's reference otherwise.
        reference           text NOT NULL,
        first_run_id        bigint NOT NULL REFERENCES reconciliation_runs (id),
        last_run_id         bigint NOT NULL REFERENCES reconciliation_runs (id),
        client_id           uuid,
        our_kind            text,
        our_record_id       text,
        our_reference       text,
        our_amount          numeric(20,4),
        our_status          text,
        operator_reference  text,
        operator_amount     numeric(20,4),
        operator_status     text,
        currency            char(3),
        moved_at            timestamptz,
        evidence            jsonb NOT NULL DEFAULT '{}',
        -- A difference is OPEN until a later run finds it matched or our status query settles it (SETTLED), or a person
        -- resolves it (RESOLVED). A matched row has no state.
        state               text CHECK (state IN ('OPEN', 'SETTLED', 'RESOLVED')),
        settled_by          text,
        resolved_by         text,
        resolution_note     text,
        resolution_entry_id bigint,
        closed_at           timestamptz,
        updated_at          timestamptz NOT NULL DEFAULT now(),
        UNIQUE (rail, outcome, reference),
        CHECK ((outcome = 'MATCHED') = (state IS NULL)),
        CHECK ((state = 'RESOLVED') = (resolved_by IS NOT NULL AND resolution_note IS NOT NULL))
      );
      CREATE INDEX reconciliation_rows_run_ix ON reconciliation_rows (last_run_id);
      CREATE INDEX reconciliation_rows_open_ix ON reconciliation_rows (rail) WHERE state = 'OPEN';
      CREATE INDEX reconciliation_rows_client_ix ON reconciliation_rows (client_id, updated_at DESC) WHERE state IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reconciliation_rows; DROP TABLE reconciliation_runs;`);
  }
}
