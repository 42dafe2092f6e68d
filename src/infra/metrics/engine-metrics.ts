import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { withTimeout } from '../../common/with-timeout';
import { ALL_QUEUES } from '../queue/queues';

/** How often the event-loop delay histogram samples: a stall longer than this is always seen, a shorter one by chance. */
const EVENT_LOOP_SAMPLE_MS = 100;
const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/**
 * Records per status, counted in Postgres at scrape time so that every process reports what all of them did (the
 * worker, which books most final statuses, serves no HTTP). Status codes as the interfaces print them.
 */
const STATUS_COUNTS: Record<string, { help: string; sql: string }> = {
  paygate_payments: {
    help: 'Payments (charges and checkout payments) per payment_status',
    sql: `SELECT payment_status::text AS label, count(*)::int AS value FROM payments GROUP BY 1`,
  },
  paygate_payouts: {
    help: 'Payouts (local, IMT, B2B) per payment_status',
    sql: `SELECT status::text AS label, count(*)::int AS value FROM payouts GROUP BY 1`,
  },
  paygate_airtime_recipients: {
    help: 'Airtime top-ups per service_status',
    sql: `SELECT service_status::text AS label, count(*)::int AS value FROM airtime_recipients GROUP BY 1`,
  },
  paygate_callback_deliveries: {
    help: 'Callback deliveries per status (PENDING, DELIVERED, FAILED)',
    sql: `SELECT status AS label, count(*)::int AS value FROM callback_deliveries GROUP BY 1`,
  },
};

/** Prometheus metrics of the asynchronous engine, served at /metrics. */
@Injectable()
export class EngineMetrics implements OnModuleInit {
  readonly registry = new Registry();
  private readonly jobFailures = new Counter({
    name: 'paygate_job_failures_total',
    help: 'Jobs whose processing threw (they are retried by BullMQ)',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  private readonly outboxRows = new Counter({
    name: 'paygate_claimed_work_total',
    help: 'Outbox rows worked off by BullMQ jobs, by topic and outcome (done, or retry: tried again after the back-off)',
    labelNames: ['topic', 'outcome'],
    registers: [this.registry],
  });
  private readonly callbackOutcomes = new Counter({
    name: 'paygate_callback_attempts_total',
    help: 'Callback delivery attempts by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly railUnknownAnswers = new Counter({
    name: 'paygate_rail_unknown_answers_total',
    help: 'Operator answers in words we do not know, by rail and call: the request stays held and is asked about again',
    labelNames: ['rail', 'call'],
    registers: [this.registry],
  });
  private readonly replicaSkips = new Counter({
    name: 'paygate_read_replica_skipped_total',
    help: 'Reads meant for the replica (DATABASE_READ_URL) that the primary served: the replica lagged or was down',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  /** Per flow, the query of its oldest item still waiting for its rail (addRailWait). */
  private readonly railWaits = new Map<string, string>();

  private readonly httpDurations = new Histogram({
    name: 'paygate_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status: latency (its _count is the number of requests)',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    // The event-loop delay histogram samples every EVENT_LOOP_SAMPLE_MS rather than prom-client's 10 ms: its timer
    // woke an idle process 100 times a second (about 1 % of a CPU each for api and worker, issue 32).
    collectDefaultMetrics({ register: this.registry, prefix: 'paygate_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    const queues = ALL_QUEUES.map((name) => this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
    new Gauge({
      name: 'paygate_queue_jobs',
      help: 'Jobs per BullMQ queue and state (absent while Redis is unreachable)',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        this.reset();
        await Promise.all(
          queues.map(async (queue) => {
            const counts = await withTimeout(queue.getJobCounts(...JOB_STATES), 1000, 'queue counts timed out').catch(() => null);
            for (const state of JOB_STATES) if (counts) this.set({ queue: queue.name, state }, counts[state] ?? 0);
          }),
        );
      },
    });
    this.queryGauge(
      'paygate_outbox_pending',
      'Outbox rows not yet relayed to BullMQ (due now, or scheduled for later)',
      'due',
      `SELECT x.label, x.value FROM (
         SELECT count(*) FILTER (WHERE available_at <= now())::int AS due, count(*) FILTER (WHERE available_at > now())::int AS later
         FROM outbox WHERE relayed_at IS NULL) c, LATERAL (VALUES ('now', c.due), ('later', c.later)) x(label, value)`,
    );
    this.queryGauge(
      'paygate_callbacks_pending',
      'Callback deliveries still to be attempted: due now (or a replay asked for), or a retry scheduled for later',
      'due',
      `SELECT x.label, x.value FROM (
         SELECT count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now() OR replay_requested_at IS NOT NULL)::int AS due,
                count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at > now() AND replay_requested_at IS NULL)::int AS later
         FROM callback_deliveries WHERE status = 'PENDING' OR replay_requested_at IS NOT NULL) c,
       LATERAL (VALUES ('now', c.due), ('later', c.later)) x(label, value)`,
    );
    for (const [name, { help, sql }] of Object.entries(STATUS_COUNTS)) this.queryGauge(name, help, 'status', sql);
    this.addGauge(
      'paygate_rail_oldest_unresolved_seconds',
      'Age of the oldest payment, payout or airtime top-up still waiting for its rail (pending or jammed); 0 when none',
      ['flow'],
      async () => {
        const flows = [...this.railWaits];
        if (flows.length === 0) return [];
        const rows: { label: string; value: number | null }[] = await this.db.query(
          flows
            .map(([, oldest], i) => `SELECT $${i + 1}::text AS label, extract(epoch FROM now() - (${oldest}))::float AS value`)
            .join(' UNION ALL '),
          flows.map(([flow]) => flow),
        );
        return rows.map((row) => ({ labels: { flow: row.label }, value: row.value ?? 0 }));
      },
    );
    const db = this.db;
    // Both FX series come from fx_refreshes, so they read the same whichever process refreshed.
    new Counter({
      name: 'paygate_fx_refresh_failures_total',
      help: 'FX rate refreshes that failed (the rates they would have replaced are kept)',
      registers: [this.registry],
      collect: async function (this: Counter) {
        const [row] = await db.query(`SELECT coalesce(sum(failures), 0)::int AS failures FROM fx_refreshes`);
        this.reset();
        this.inc(row.failures);
      },
    });
    new Gauge({
      name: 'paygate_fx_rates_age_seconds',
      help: 'Age of the rates written by the last completed FX refresh (absent before the first); conversions refuse rates older than FX_MAX_RATE_AGE_MS',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        this.reset();
        const [row] = await db.query(`SELECT extract(epoch FROM now() - max(completed_at))::float8 AS age FROM fx_refreshes`);
        if (row.age !== null) this.set(row.age);
      },
    });
  }

  /** A gauge filled when scraped by one query, whose rows are its samples: `label` (the label's value) and `value`. */
  private queryGauge(name: string, help: string, label: string, sql: string): void {
    this.addGauge(name, help, [label], async () => {
      const rows: { label: string; value: number | null }[] = await this.db.query(sql);
      return rows.map((row) => ({ labels: { [label]: row.label }, value: row.value ?? 0 }));
    });
  }

  /** A gauge whose samples are read when scraped; domains add theirs (the infrastructure knows no domain's tables). */
  addGauge(
    name: string,
    help: string,
    labelNames: string[],
    samples: () => Promise<{ labels: Record<string, string>; value: number }[]>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const read = await samples();
        this.reset();
        for (const sample of read) this.set(sample.labels, sample.value);
      },
    });
  }

  /** A counter whose totals are read when scraped, from records only ever added (so every process reports the same). */
  addCounter(
    name: string,
    help: string,
    labelNames: string[],
    totals: () => Promise<{ labels: Record<string, string>; value: number }[]>,
  ): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: async function (this: Counter) {
        const read = await totals();
        this.reset();
        for (const total of read) this.inc(total.labels, total.value);
      },
    });
  }

  /**
   * Adds a flow to paygate_rail_oldest_unresolved_seconds: `oldestSql` selects the created_at of the flow's oldest item
   * still waiting for its rail's final answer (null when none). Its domain writes it, with its own status codes.
   */
  addRailWait(flow: string, oldestSql: string): void {
    this.railWaits.set(flow, oldestSql);
  }

  /** One answered request; `route` is the route's pattern (`/v1/payouts/:reference/status`), never the raw URL. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDurations.observe({ method, route, status: String(status) }, seconds);
  }

  jobFailed(queue: string): void {
    this.jobFailures.inc({ queue });
  }

  outboxWork(topic: string, outcome: 'done' | 'retry', rows: number): void {
    if (rows > 0) this.outboxRows.inc({ topic, outcome }, rows);
  }

  /** An operator answered a state we have no mapping for: logged by the caller, counted here, never read as a failure. */
  railUnknownAnswer(rail: string, call: string): void {
    this.railUnknownAnswers.inc({ rail, call });
  }

  replicaSkipped(reason: 'lag' | 'down'): void {
    this.replicaSkips.inc({ reason });
  }

  callbackOutcome(outcome: 'delivered' | 'retry_scheduled' | 'failed'): void {
    this.callbackOutcomes.inc({ outcome });
  }
}
