import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { GroupCommit } from '../database/group-commit';
import { PreparedStatement, runPrepared } from '../database/prepared';
import { EngineMetrics } from '../metrics/engine-metrics';
import { outboxDoneMarks } from './outbox-done-marks';
import { CLAIMED_TOPICS, Topic } from './queues';

/** An outbox row as its handler gets it: ids only (handlers reload the state), and how often it was tried before. */
export interface ClaimedItem {
  outboxId: string;
  payload: Record<string, string>;
  retries: number;
}

/**
 * Works off a group of claimed rows of one topic and answers, per row in their order, whether it is done (true) or is
 * to be tried again later (false). A handler that throws has every row of the group tried again.
 */
export type ClaimedWorkHandler = (items: ClaimedItem[]) => Promise<boolean[]>;

export interface ClaimedTopicOptions {
  /** The most rows one claim takes, and so one handler call gets. */
  batch: number;
  /** The most rows of the topic a worker holds (claimed, not finished) at once: what bounds its parallel work. */
  held: number;
}

interface ClaimedTopic {
  topic: Topic;
  handler: ClaimedWorkHandler;
  options: ClaimedTopicOptions;
  held: number;
}

/** Every topic with room in one query: up to its room of its oldest due rows, each topic by its own index range. */
const CLAIM: PreparedStatement = {
  name: 'outbox_claim',
  text: `UPDATE outbox o SET relayed_at = now()
         FROM unnest($1::text[], $2::int[]) t(topic, room)
         CROSS JOIN LATERAL (SELECT id FROM outbox WHERE topic = t.topic AND relayed_at IS NULL AND available_at <= now()
                             ORDER BY available_at, id LIMIT t.room FOR UPDATE SKIP LOCKED) due
         WHERE o.id = due.id
         RETURNING o.id, o.topic, o.payload, o.relay_count`,
};
/** A row tried again waits 0.5 s, doubling with each try up to a minute. */
const RETRY: PreparedStatement = {
  name: 'outbox_claimed_retry',
  text: `UPDATE outbox SET relayed_at = NULL, relay_count = relay_count + 1,
           available_at = now() + make_interval(secs => least(60, 0.5 * power(2, least(relay_count, 7))))
         WHERE id = ANY($1::bigint[]) AND done_at IS NULL`,
};

const IDLE_POLL_MS = 50;
const ERROR_BACKOFF_MS = 1000;

/**
 * Claims the hot topics' outbox rows (CLAIMED_TOPICS) straight from Postgres, many per query, FOR UPDATE SKIP LOCKED,
 * so workers share them without overlap, and hands each topic's rows to its handler as one group: one claim and one
 * done mark per group instead of a BullMQ job of dozens of Redis commands per row. A claim stamps relayed_at, which
 * is its lease: a worker that dies holding rows leaves them relayed and not done, and the relay's sweep for lost work
 * (OUTBOX_LOST_JOB_AFTER_MS) puts them back, as it does jobs Redis lost. Each topic claims within its own bound, so a
 * backlog of one (a 10,000-recipient airtime run) never starves another (payouts).
 */
@Injectable()
export class OutboxClaimer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxClaimer.name);
  private readonly topics = new Map<Topic, ClaimedTopic>();
  private running = false;
  private stopped: Promise<void> = Promise.resolve();
  private signal: { promise: Promise<void>; resolve: () => void } | null = null;
  private lastErrorLog = 0;
  private readonly doneMarks: GroupCommit<string, null>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly metrics: EngineMetrics,
  ) {
    this.doneMarks = outboxDoneMarks(db);
  }

  /** Registers the handler of a claimed topic (at module init; the claiming starts once the application is up). */
  handle(topic: Topic, handler: ClaimedWorkHandler, options: ClaimedTopicOptions): void {
    if (!CLAIMED_TOPICS.includes(topic)) throw new Error(`${topic} is relayed to BullMQ, not claimed`);
    if (this.topics.has(topic)) throw new Error(`${topic} has a handler already`);
    this.topics.set(topic, { topic, handler, options, held: 0 });
  }

  onApplicationBootstrap(): void {
    const unhandled = CLAIMED_TOPICS.filter((t) => !this.topics.has(t));
    if (unhandled.length > 0) throw new Error(`no handler for claimed topic(s) ${unhandled.join(', ')}`);
    this.running = true;
    this.stopped = this.loop();
  }

  /** Stops claiming and lets the groups under way finish. */
  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.notify();
    await this.stopped;
    while ([...this.topics.values()].some((t) => t.held > 0)) await this.finished();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const rooms = [...this.topics.values()]
        .map((topic) => ({ topic, room: Math.min(topic.options.batch, topic.options.held - topic.held) }))
        .filter((r) => r.room > 0);
      let full = false;
      try {
        if (rooms.length > 0) {
          const rows = await runPrepared<{ id: string; topic: Topic; payload: Record<string, string>; relay_count: number }>(
            this.db,
            CLAIM,
            [rooms.map((r) => r.topic.topic), rooms.map((r) => r.room)],
          );
          for (const { topic, room } of rooms) {
            const items = rows
              .filter((r) => r.topic === topic.topic)
              .map((r) => ({ outboxId: String(r.id), payload: r.payload, retries: r.relay_count }))
              .sort((a, b) => Number(a.outboxId) - Number(b.outboxId));
            if (items.length === room) full = true;
            if (items.length === 0) continue;
            topic.held += items.length;
            void this.work(topic, items);
          }
        }
      } catch (error) {
        this.warnThrottled(`claiming outbox work paused: ${(error as Error).message}; work waits in Postgres`);
        await sleep(ERROR_BACKOFF_MS);
        continue;
      }
      if (!full) await Promise.race([sleep(IDLE_POLL_MS), this.finished()]);
    }
  }

  private async work(topic: ClaimedTopic, items: ClaimedItem[]): Promise<void> {
    let done: boolean[];
    try {
      done = await topic.handler(items);
      if (done.length !== items.length) throw new Error(`${done.length} answers for ${items.length} rows`);
    } catch (error) {
      this.warnThrottled(`${topic.topic}: a group of ${items.length} failed: ${(error as Error).message}`);
      done = items.map(() => false);
    }
    const again = items.filter((_, i) => !done[i]).map((item) => item.outboxId);
    const finished = items.filter((_, i) => done[i]).map((item) => item.outboxId);
    this.metrics.workClaimed(topic.topic, 'done', finished.length);
    this.metrics.workClaimed(topic.topic, 'retry', again.length);
    // A mark that fails (the database is away) leaves the row to the sweep for lost work, which offers it once more.
    await Promise.all([
      ...finished.map((id) => this.doneMarks.submit(id).catch(() => undefined)),
      again.length > 0 ? runPrepared(this.db, RETRY, [again]).catch(() => undefined) : undefined,
    ]);
    topic.held -= items.length;
    this.notify();
  }

  /** Resolves when a group finishes (or shutdown starts): one promise shared by every waiter until then. */
  private finished(): Promise<void> {
    this.signal ??= signal();
    return this.signal.promise;
  }

  private notify(): void {
    const waiting = this.signal;
    this.signal = null;
    waiting?.resolve();
  }

  private warnThrottled(message: string): void {
    if (Date.now() - this.lastErrorLog < 30_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn(message);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
