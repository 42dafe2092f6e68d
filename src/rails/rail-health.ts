import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RAILS_CONFIG, type RailsConfig } from './rails-config';

/** The real operators, by the name their adapters record (rail_requests.rail, rail_health.rail). */
export type Operator = 'mpesa' | 'jenga' | 'africastalking' | 'openexchangerates';
export type CircuitState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** Each rail, the operator that plays it in production, and how messages name it. */
const RAILS = [
  { rail: 'mobile_money', operator: 'mpesa', name: 'the mobile-money rail (M-Pesa)' },
  { rail: 'bank', operator: 'jenga', name: 'the bank rail (Jenga PesaLink)' },
  { rail: 'airtime', operator: 'africastalking', name: "the airtime rail (Africa's Talking)" },
  { rail: 'fx', operator: 'openexchangerates', name: 'the FX rail (Open Exchange Rates)' },
] as const;

/** In-process copies are read again after this long: the money path reads the table at most once a second per rail. */
const CACHE_MS = 1000;
/** A success on a healthy rail is written at most this often: enough for "last success" in /health/ready. */
const TOUCH_MS = 30_000;

interface HealthRow {
  rail: string;
  consecutive_failures: number;
  opened_at: Date | null;
  open_until: Date | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_error: string | null;
}

/** One rail's circuit as a client sees it: asked before each call, told how each call went. */
export interface RailCircuit {
  /** False while the circuit is open: the call is not made (the operator is treated as busy). */
  admits(): Promise<boolean>;
  /** The operator answered (whatever it answered about the request: a refusal is an answer). */
  succeeded(): Promise<void>;
  /** The operator did not answer usefully: a time-out, a lost connection, a 5xx, busy or spike arrest. */
  failed(reason: string): Promise<void>;
}

/** What /health/ready and /metrics show of a rail. */
export type RailReport =
  | { rail: string; operator: 'sandbox'; simulator: true }
  | {
      rail: string;
      operator: Operator;
      circuit: CircuitState;
      consecutive_failures: number;
      last_success_at: string | null;
      last_failure_at: string | null;
      last_error: string | null;
      open_until: string | null;
    };

const stateOf = (row: HealthRow | null, now = Date.now()): CircuitState =>
  !row?.open_until ? 'CLOSED' : new Date(row.open_until).getTime() > now ? 'OPEN' : 'HALF_OPEN';

/**
 * A circuit breaker per real rail, kept in Postgres (rail_health) so every process sees the same circuit: workers
 * meet the failures, api processes refuse new requests. After RAIL_CIRCUIT_FAILURES failed calls in a row the circuit
 * opens for RAIL_CIRCUIT_COOLDOWN_MS; then it is half-open: calls and new requests go ahead as probes, the first
 * success closes it and a failure opens it again. Reads are cached in-process for a second; a success writes only
 * when it changes something (failures to forget, a circuit to close) or its "last success" is 30 s old.
 */
@Injectable()
export class RailHealth {
  private readonly logger = new Logger('RailHealth');
  private readonly cached = new Map<string, { row: HealthRow | null; readAt: number }>();
  private readonly reading = new Map<string, Promise<HealthRow | null>>();
  private readonly touching = new Set<string>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
  ) {}

  /** The circuit of one operator, for its client. */
  circuit(operator: Operator): RailCircuit {
    return {
      admits: async () => stateOf(await this.current(operator)) !== 'OPEN',
      succeeded: () => this.succeeded(operator),
      failed: (reason) => this.failed(operator, reason),
    };
  }

  /**
   * Why a new request on this operator's rail is refused now (its circuit is open), or null: also null for a
   * simulator (no operator). Acceptance asks this, so nothing is stored for a request the rail cannot take.
   */
  async refusal(operator: Operator | null): Promise<string | null> {
    if (!operator) return null;
    const row = await this.current(operator);
    if (stateOf(row) !== 'OPEN') return null;
    const name = RAILS.find((rail) => rail.operator === operator)!.name;
    return `${name[0].toUpperCase()}${name.slice(1)} is unavailable after repeated failures; nothing was stored, try again after ${new Date(row!.open_until!).toISOString()}`;
  }

  /** Every rail as configured: a real operator's circuit read afresh, or the simulator. */
  async report(): Promise<RailReport[]> {
    const rows: HealthRow[] = await this.db.query(`SELECT * FROM rail_health`);
    const now = Date.now();
    return RAILS.map(({ rail, operator }) => {
      if (!this.isReal(operator)) return { rail, operator: 'sandbox', simulator: true };
      const row = rows.find((candidate) => candidate.rail === operator) ?? null;
      this.cached.set(operator, { row, readAt: now });
      const iso = (at: Date | null | undefined) => (at ? new Date(at).toISOString() : null);
      return {
        rail,
        operator,
        circuit: stateOf(row, now),
        consecutive_failures: row?.consecutive_failures ?? 0,
        last_success_at: iso(row?.last_success_at),
        last_failure_at: iso(row?.last_failure_at),
        last_error: row?.last_error ?? null,
        open_until: iso(row?.open_until),
      };
    });
  }

  private isReal(operator: Operator): boolean {
    const chosen = {
      mpesa: this.rails.mobileMoney,
      jenga: this.rails.bank,
      africastalking: this.rails.airtime,
      openexchangerates: this.rails.fx,
    };
    return chosen[operator] === operator;
  }

  private async current(operator: Operator): Promise<HealthRow | null> {
    const cached = this.cached.get(operator);
    if (cached && Date.now() - cached.readAt < CACHE_MS) return cached.row;
    let reading = this.reading.get(operator);
    if (!reading) {
      reading = this.db
        .query(`SELECT * FROM rail_health WHERE rail = $1`, [operator])
        .then(([row]: HealthRow[]) => {
          this.cached.set(operator, { row: row ?? null, readAt: Date.now() });
          return row ?? null;
        })
        // Unreadable (Postgres away): the last known state, else closed; the request itself will meet the outage.
        .catch(() => cached?.row ?? null)
        .finally(() => this.reading.delete(operator));
      this.reading.set(operator, reading);
    }
    return reading;
  }

  private async succeeded(operator: Operator): Promise<void> {
    const row = await this.current(operator);
    const fresh = row?.last_success_at && Date.now() - new Date(row.last_success_at).getTime() < TOUCH_MS;
    if ((fresh && row.consecutive_failures === 0 && !row.open_until) || this.touching.has(operator)) return;
    this.touching.add(operator);
    try {
      await this.write(
        operator,
        `INSERT INTO rail_health (rail, last_success_at) VALUES ($1, now())
         ON CONFLICT (rail) DO UPDATE SET consecutive_failures = 0, opened_at = NULL, open_until = NULL, last_success_at = now()
         RETURNING *`,
        [operator],
      );
    } finally {
      this.touching.delete(operator);
    }
  }

  /** Counts the failure; the threshold reached, or a probe failed (half-open), opens the circuit for the cool-down. */
  private async failed(operator: Operator, reason: string): Promise<void> {
    const { failures, cooldownMs } = this.rails.circuit;
    await this.write(
      operator,
      `INSERT INTO rail_health AS h (rail, consecutive_failures, last_failure_at, last_error, opened_at, open_until)
       VALUES ($1, 1, now(), $2, CASE WHEN $3 <= 1 THEN now() END, CASE WHEN $3 <= 1 THEN now() + make_interval(secs => $4 / 1000.0) END)
       ON CONFLICT (rail) DO UPDATE SET
         consecutive_failures = h.consecutive_failures + 1, last_failure_at = now(), last_error = $2,
         opened_at = CASE WHEN h.open_until > now() THEN h.opened_at
                          WHEN h.open_until IS NOT NULL OR h.consecutive_failures + 1 >= $3 THEN now() END,
         open_until = CASE WHEN h.open_until > now() THEN h.open_until
                           WHEN h.open_until IS NOT NULL OR h.consecutive_failures + 1 >= $3 THEN now() + make_interval(secs => $4 / 1000.0) END
       RETURNING *`,
      [operator, reason.slice(0, 500), failures, cooldownMs],
    );
  }

  private async write(operator: Operator, sql: string, params: unknown[]): Promise<void> {
    try {
      const [row]: HealthRow[] = await this.db.query(sql, params);
      const before = stateOf(this.cached.get(operator)?.row ?? null);
      this.cached.set(operator, { row, readAt: Date.now() });
      const after = stateOf(row);
      if (after !== before) this.logger.warn(`${operator} circuit ${after}${after === 'OPEN' ? `: ${row.last_error}` : ''}`);
    } catch (error) {
      // The circuit is advice: a call's outcome never depends on recording it.
      this.logger.warn(`${operator} circuit not recorded: ${(error as Error).message}`);
    }
  }
}
