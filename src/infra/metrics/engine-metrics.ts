import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { withTimeout } from '../../common/with-timeout';
import { QUEUES } from '../queue/queues';

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

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
  private readonly callbackOutcomes = new Counter({
    name: 'paygate_callback_attempts_total',
    help: 'Callback delivery attempts by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'paygate_' });
    const queues = Object.values(QUEUES).map((name) => this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }));
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
    const db = this.db;
    new Gauge({
      name: 'paygate_outbox_pending',
      help: 'Outbox rows not yet relayed to BullMQ (due now, or scheduled for later)',
      labelNames: ['due'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(
          `SELECT count(*) FILTER (WHERE available_at <= now())::int AS due, count(*) FILTER (WHERE available_at > now())::int AS later
           FROM outbox WHERE relayed_at IS NULL`,
        );
        this.set({ due: 'now' }, row.due);
        this.set({ due: 'later' }, row.later);
      },
    });
    new Gauge({
      name: 'paygate_callbacks_pending',
      help: 'Callback deliveries still to be attempted: due now (or a replay asked for), or a retry scheduled for later',
      labelNames: ['due'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(
          `SELECT count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at <= now() OR replay_requested_at IS NOT NULL)::int AS due,
                  count(*) FILTER (WHERE status = 'PENDING' AND next_attempt_at > now() AND replay_requested_at IS NULL)::int AS later
           FROM callback_deliveries WHERE status = 'PENDING' OR replay_requested_at IS NOT NULL`,
        );
        this.set({ due: 'now' }, row.due);
        this.set({ due: 'later' }, row.later);
      },
    });
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

  jobFailed(queue: string): void {
    this.jobFailures.inc({ queue });
  }

  callbackOutcome(outcome: 'delivered' | 'retry_scheduled' | 'failed'): void {
    this.callbackOutcomes.inc({ outcome });
  }
}
