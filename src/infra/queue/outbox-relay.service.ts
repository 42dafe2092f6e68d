import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { withTimeout } from '../../common/with-timeout';
import { CLAIMED_TOPICS, QUEUES, QueueName, queueOf, TOPICS } from './queues';

const BATCH = 200;
/** The topics BullMQ runs; the others are claimed from the outbox by OutboxClaimer. */
const RELAYED_TOPICS = Object.values(TOPICS).filter((t) => !CLAIMED_TOPICS.includes(t));
const IDLE_POLL_MS = 50;
const ERROR_BACKOFF_MS = 1000;
const ENQUEUE_TIMEOUT_MS = 3000;
/** How often relayed-but-unfinished jobs are looked for: every 15 s, or sooner when the threshold is short. */
const MAX_SWEEP_EVERY_MS = 15_000;

/**
 * Moves due outbox rows of the topics BullMQ runs to it (the others are claimed straight from Postgres by
 * OutboxClaimer). Rows are claimed with FOR UPDATE SKIP LOCKED, so several relays share the work without overlap; a row is marked relayed only after BullMQ accepted its job, and the job id is derived
 * from the row, so a relay that dies in between re-adds a job BullMQ already knows. While Redis is away the rows
 * wait in Postgres; jobs Redis lost after relaying (it keeps nothing on disk) are found by their missing done
 * mark and relayed again.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly queues: Record<QueueName, Queue>;
  private running = false;
  private stopped: Promise<void> = Promise.resolve();
  private lastErrorLog = 0;
  /** A relayed job not done after this long is presumed lost with Redis and relayed again (OUTBOX_LOST_JOB_AFTER_MS). */
  private readonly lostJobAfterMs: number;
  private readonly sweepEveryMs: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectQueue(QUEUES.payments) payments: Queue,
    @InjectQueue(QUEUES.reversals) reversals: Queue,
  ) {
    this.queues = { payments, reversals };
    this.lostJobAfterMs = config.outboxLostJobAfterMs;
    this.sweepEveryMs = Math.min(MAX_SWEEP_EVERY_MS, Math.max(250, Math.floor(this.lostJobAfterMs / 4)));
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.stopped = this.loop();
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    await this.stopped;
  }

  /** Relays one batch of due rows; returns how many were relayed. */
  async relayDue(): Promise<number> {
    return this.db.transaction(async (manager) => {
      const rows: Array<{
        id: string;
        client_id: string;
        topic: string;
        payload: Record<string, string>;
        relay_count: number;
        job_key: string;
      }> = await manager.query(
        `SELECT id, client_id, topic, payload, relay_count, job_key FROM outbox WHERE topic = ANY($1) AND relayed_at IS NULL AND available_at <= now()
         ORDER BY available_at, id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        [RELAYED_TOPICS],
      );
      if (rows.length === 0) return 0;
      const byQueue = new Map<
        QueueName,
        Array<{
          name: string;
          data: Record<string, string>;
          opts: { jobId: string };
        }>
      >();
      for (const row of rows) {
        const { queue, job } = queueOf(row.topic);
        const jobs = byQueue.get(queue) ?? [];
        jobs.push({
          name: job,
          data: { ...row.payload, clientId: row.client_id, outboxId: row.id },
          opts: { jobId: `outbox-${row.job_key}-${row.relay_count}` },
        });
        byQueue.set(queue, jobs);
      }
      await withTimeout(
        Promise.all([...byQueue].map(([queue, jobs]) => this.queues[queue].addBulk(jobs))),
        ENQUEUE_TIMEOUT_MS,
        'Redis did not accept the jobs in time',
      );
      await manager.query(`UPDATE outbox SET relayed_at = now() WHERE id = ANY($1)`, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /** Puts back jobs that were relayed but never finished, e.g. because Redis restarted without its data. */
  async requeueLost(): Promise<number> {
    const [, count] = await this.db.query(
      `UPDATE outbox SET relayed_at = NULL, relay_count = relay_count + 1
       WHERE relayed_at IS NOT NULL AND done_at IS NULL AND relayed_at < now() - make_interval(secs => $1)`,
      [this.lostJobAfterMs / 1000],
    );
    return count;
  }

  private async loop(): Promise<void> {
    let lastSweep = 0;
    while (this.running) {
      try {
        if (Date.now() - lastSweep > this.sweepEveryMs) {
          lastSweep = Date.now();
          const requeued = await this.requeueLost();
          if (requeued > 0) this.logger.warn(`${requeued} relayed jobs never finished; relaying them again`);
        }
        const relayed = await this.relayDue();
        if (relayed < BATCH) await sleep(IDLE_POLL_MS);
      } catch (error) {
        if (Date.now() - this.lastErrorLog > 30_000) {
          this.logger.warn(`outbox relay paused: ${(error as Error).message}; work waits in Postgres`);
          this.lastErrorLog = Date.now();
        }
        await sleep(ERROR_BACKOFF_MS);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
