import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OperatorBalance, ReconciledRail, ReconciliationPeriod } from '../rails/operator-statement';
import type { MatchedRow } from './matching';

export interface RunRow {
  id: string;
  rail: ReconciledRail;
  period_from: Date;
  period_to: Date;
  started_at: Date;
  finished_at: Date | null;
  outcome: 'RUNNING' | 'COMPLETE' | 'INCOMPLETE';
  reason: string | null;
  started_by: string;
  counts: { outcomes?: Record<string, number>; operator_rows?: number; our_movements?: number; asked?: number; settled?: number };
  balance_currency: string | null;
  operator_balance: string | null;
  opening_balance: string | null;
  opening_at: Date | null;
  opening_source: string | null;
  period_movements: string | null;
  expected_balance: string | null;
  in_flight: string | null;
  balance_difference: string | null;
  balance_at: Date | null;
}

export interface ReconRow {
  id: string;
  rail: ReconciledRail;
  outcome: MatchedRow['outcome'];
  reference: string;
  first_run_id: string;
  last_run_id: string;
  client_id: string | null;
  our_kind: string | null;
  our_record_id: string | null;
  our_reference: string | null;
  our_amount: string | null;
  our_status: string | null;
  operator_reference: string | null;
  operator_amount: string | null;
  operator_status: string | null;
  currency: string | null;
  moved_at: Date | null;
  evidence: Record<string, unknown>;
  state: 'OPEN' | 'SETTLED' | 'RESOLVED' | null;
  settled_by: string | null;
  resolved_by: string | null;
  resolution_note: string | null;
  resolution_entry_id: string | null;
  closed_at: Date | null;
}

/** The balance line of a run, as stored. */
export interface BalanceLine {
  operator: OperatorBalance;
  /** When we had the operator's answer, by our clock: the end of this roll-forward and the start of the next. */
  at: Date;
  /** Null when the rail has no complete run and no opening set before the balance's instant. */
  opening: Opening | null;
  /** Our movements that succeeded from the opening to the balance's instant, IN minus OUT. */
  movements: string | null;
  /** The opening plus the movements: what the operator should hold. */
  expected: string | null;
  inFlight: string;
  /** The operator's balance less the expected one. */
  difference: string | null;
}

/** The operator's balance a roll-forward starts from. */
export interface Opening {
  amount: string;
  at: Date;
  /** 'run N' or 'opening N'. */
  source: string;
}

export interface OpeningRow {
  id: string;
  rail: ReconciledRail;
  amount: string;
  currency: string;
  at: Date;
  set_by: string;
  note: string | null;
  created_at: Date;
}

/** Runs and their rows (coordinator tables: read and written outside money transactions). */
@Injectable()
export class ReconciliationRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async start(rail: ReconciledRail, period: ReconciliationPeriod, by: string): Promise<RunRow> {
    const [run] = await this.db.query(
      `INSERT INTO reconciliation_runs (rail, period_from, period_to, started_by) VALUES ($1, $2, $3, $4) RETURNING *`,
      [rail, period.from, period.to, by],
    );
    return run;
  }

  async finish(runId: string, outcome: 'COMPLETE' | 'INCOMPLETE', reason: string | null, counts: Record<string, unknown>): Promise<RunRow> {
    const [[run]] = await this.db.query(
      `UPDATE reconciliation_runs SET finished_at = now(), outcome = $2, reason = $3, counts = $4 WHERE id = $1 RETURNING *`,
      [runId, outcome, reason, JSON.stringify(counts)],
    );
    return run;
  }

  async recordBalance(runId: string, line: BalanceLine): Promise<void> {
    await this.db.query(
      `UPDATE reconciliation_runs SET balance_currency = $2, operator_balance = $3, expected_balance = $4, in_flight = $5,
              balance_difference = $6, balance_at = $7, balance_evidence = $8, opening_balance = $9, opening_at = $10,
              opening_source = $11, period_movements = $12 WHERE id = $1`,
      [
        runId,
        line.operator.currency,
        line.operator.amount.toFixed(4),
        line.expected,
        line.inFlight,
        line.difference,
        line.at,
        JSON.stringify(line.operator.evidence),
        line.opening?.amount ?? null,
        line.opening?.at ?? null,
        line.opening?.source ?? null,
        line.movements,
      ],
    );
  }

  /**
   * The latest operator balance in the currency at or before an instant: a complete run's, or an opening a person set.
   */
  async opening(rail: ReconciledRail, currency: string, at: Date): Promise<Opening | null> {
    const [found] = await this.db.query(
      `SELECT amount::text AS amount, at, source FROM (
         SELECT operator_balance AS amount, balance_at AS at, 'run ' || id AS source, 1 AS rank FROM reconciliation_runs
          WHERE rail = $1 AND outcome = 'COMPLETE' AND balance_currency = $2 AND balance_at <= $3
         UNION ALL
         SELECT amount, at, 'opening ' || id, 2 FROM reconciliation_openings WHERE rail = $1 AND currency = $2 AND at <= $3
       ) o ORDER BY at DESC, rank DESC LIMIT 1`,
      [rail, currency, at],
    );
    return found ? { amount: found.amount, at: new Date(found.at), source: found.source } : null;
  }

  /** A person's opening balance of the rail's operator account at an instant, kept with who set it and why. */
  async setOpening(rail: ReconciledRail, amount: string, currency: string, at: Date, by: string, note: string | null): Promise<OpeningRow> {
    const [row] = await this.db.query(
      `INSERT INTO reconciliation_openings (rail, amount, currency, at, set_by, note) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [rail, amount, currency, at, by, note],
    );
    return row;
  }

  /**
   * Keeps each row of a run under its key: a row found before is brought up to date (its first run kept), a new one
   * added; a difference that was resolved by a person stays resolved. `settled` names the keys our status query
   * settled in this run.
   */
  async keep(run: RunRow, rows: MatchedRow[], evidenceOf: (row: MatchedRow) => Record<string, unknown>): Promise<void> {
    if (rows.length === 0) return;
    const items = rows.map((row) => ({
      outcome: row.outcome,
      reference: row.reference,
      client_id: row.ours?.clientId ?? null,
      our_kind: row.ours?.kind ?? null,
      our_record_id: row.ours?.recordId ?? null,
      our_reference: row.ours?.ourReference ?? row.theirs?.ourReference ?? null,
      our_amount: row.ours?.amount.toFixed(4) ?? null,
      our_status: row.ours?.status ?? null,
      operator_reference: row.theirs?.operatorReference ?? row.ours?.operatorReference ?? null,
      operator_amount: row.theirs?.amount.toFixed(4) ?? null,
      operator_status: row.theirs?.status ?? null,
      currency: row.ours?.currency ?? row.theirs?.currency ?? null,
      moved_at: (row.ours?.at ?? row.theirs?.at)!.toISOString(),
      evidence: evidenceOf(row),
    }));
    await this.db.query(
      `INSERT INTO reconciliation_rows (rail, outcome, reference, first_run_id, last_run_id, client_id, our_kind, our_record_id,
              our_reference, our_amount, our_status, operator_reference, operator_amount, operator_status, currency, moved_at,
              evidence, state)
       SELECT $1, i.outcome, i.reference, $2, $2, i.client_id, i.our_kind, i.our_record_id, i.our_reference, i.our_amount,
              i.our_status, i.operator_reference, i.operator_amount, i.operator_status, i.currency, i.moved_at, i.evidence,
              CASE WHEN i.outcome = 'MATCHED' THEN NULL ELSE 'OPEN' END
         FROM jsonb_to_recordset($3::jsonb) i(outcome text, reference text, client_id uuid, our_kind text, our_record_id text,
              our_reference text, our_amount numeric, our_status text, operator_reference text, operator_amount numeric,
              operator_status text, currency text, moved_at timestamptz, evidence jsonb)
       ON CONFLICT (rail, outcome, reference) DO UPDATE SET
              last_run_id = EXCLUDED.last_run_id, client_id = EXCLUDED.client_id, our_kind = EXCLUDED.our_kind,
              our_record_id = EXCLUDED.our_record_id, our_reference = EXCLUDED.our_reference, our_amount = EXCLUDED.our_amount,
              our_status = EXCLUDED.our_status, operator_reference = EXCLUDED.operator_reference,
              operator_amount = EXCLUDED.operator_amount, operator_status = EXCLUDED.operator_status,
              currency = EXCLUDED.currency, moved_at = EXCLUDED.moved_at, evidence = EXCLUDED.evidence,
              state = CASE WHEN reconciliation_rows.state = 'RESOLVED' THEN 'RESOLVED' ELSE EXCLUDED.state END,
              settled_by = CASE WHEN reconciliation_rows.state = 'RESOLVED' THEN reconciliation_rows.settled_by END,
              closed_at = CASE WHEN reconciliation_rows.state = 'RESOLVED' THEN reconciliation_rows.closed_at END,
              updated_at = now()`,
      [run.rail, run.id, JSON.stringify(items)],
    );
  }

  /**
   * Closes the open differences of the rail and period this run no longer finds: matched now, by our status query
   * (the keys in `asked`) or because the other side caught up. Answers how many it closed.
   */
  async closeGone(run: RunRow, asked: ReadonlySet<string>): Promise<number> {
    const [, closed] = await this.db.query(
      `UPDATE reconciliation_rows SET state = 'SETTLED', closed_at = now(), updated_at = now(),
              settled_by = CASE WHEN reference = ANY ($5::text[]) THEN 'status query (run ' || $2 || ')' ELSE 'matched (run ' || $2 || ')' END
        WHERE rail = $1 AND state = 'OPEN' AND last_run_id <> $2 AND moved_at >= $3 AND moved_at < $4`,
      [run.rail, run.id, run.period_from, run.period_to, [...asked]],
    );
    return closed;
  }

  /** Whether the rail's period has a complete run. */
  async completed(rail: ReconciledRail, period: ReconciliationPeriod): Promise<boolean> {
    const rows = await this.db.query(
      `SELECT 1 FROM reconciliation_runs WHERE rail = $1 AND period_from = $2 AND period_to = $3 AND outcome = 'COMPLETE' LIMIT 1`,
      [rail, period.from, period.to],
    );
    return rows.length > 0;
  }

  async run(id: string): Promise<RunRow | null> {
    const [run] = await this.db.query(`SELECT * FROM reconciliation_runs WHERE id = $1`, [id]);
    return run ?? null;
  }

  async runs(rail: ReconciledRail | null, limit: number): Promise<RunRow[]> {
    return this.db.query(`SELECT * FROM reconciliation_runs WHERE $1::text IS NULL OR rail = $1 ORDER BY id DESC LIMIT $2`, [rail, limit]);
  }

  /** The rows a run last saw, differences first. */
  async rowsOf(runId: string, differencesOnly: boolean): Promise<ReconRow[]> {
    return this.db.query(
      `SELECT * FROM reconciliation_rows WHERE last_run_id = $1 AND ($2 = false OR outcome <> 'MATCHED')
        ORDER BY (outcome = 'MATCHED'), moved_at, id`,
      [runId, differencesOnly],
    );
  }

  async row(id: string): Promise<ReconRow | null> {
    const [row] = await this.db.query(`SELECT * FROM reconciliation_rows WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** A person's resolution: only an open difference moves, once. */
  async resolve(id: string, by: string, note: string, entryId: string | null): Promise<ReconRow | null> {
    const [[row]] = await this.db.query(
      `UPDATE reconciliation_rows SET state = 'RESOLVED', resolved_by = $2, resolution_note = $3, resolution_entry_id = $4,
              closed_at = now(), updated_at = now()
        WHERE id = $1 AND state = 'OPEN' RETURNING *`,
      [id, by, note, entryId],
    );
    return row ?? null;
  }

  /** The codes of clients by id (a report names each row's client). */
  async clientCodes(ids: readonly string[]): Promise<Map<string, string>> {
    const rows: { id: string; code: string }[] = await this.db.query(
      `SELECT id::text AS id, code FROM clients WHERE id = ANY ($1::uuid[])`,
      [[...new Set(ids)]],
    );
    return new Map(rows.map((row) => [row.id, row.code]));
  }

  /** Differences that touch a client's money (the merchant portal's read-only list), newest first. */
  async differencesOf(clientId: string, limit: number): Promise<ReconRow[]> {
    return this.db.query(
      `SELECT * FROM reconciliation_rows WHERE client_id = $1 AND state IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT $2`,
      [clientId, limit],
    );
  }

  /** One difference that touches a client's money, or null (another client's, a matched row, none). */
  async differenceOf(clientId: string, id: string): Promise<ReconRow | null> {
    const [row] = await this.db.query(`SELECT * FROM reconciliation_rows WHERE client_id = $1 AND id = $2 AND state IS NOT NULL`, [
      clientId,
      id,
    ]);
    return row ?? null;
  }

  /** Open differences per rail (paygate_recon_open_exceptions). */
  async openPerRail(): Promise<{ rail: string; open: number }[]> {
    return this.db.query(`SELECT rail, count(*)::int AS open FROM reconciliation_rows WHERE state = 'OPEN' GROUP BY rail`);
  }

  /** Rows found by every run, per rail and outcome (paygate_recon_rows_total): runs are only ever added. */
  async rowsPerOutcome(): Promise<{ rail: string; outcome: string; rows: number }[]> {
    return this.db.query(
      `SELECT r.rail, c.key AS outcome, sum(c.value::int)::int AS rows
         FROM reconciliation_runs r, jsonb_each_text(r.counts -> 'outcomes') c GROUP BY 1, 2`,
    );
  }
}
