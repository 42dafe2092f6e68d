import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job, Queue, Worker } from 'bullmq';
import { DataSource } from 'typeorm';
import type { GroupCommit } from '../database/group-commit';
import { EngineMetrics } from '../metrics/engine-metrics';
import { DoneRows, outboxDoneMarks } from './outbox-done-marks';
import { OwnClientWorker } from './queue.module';
import { LANES, QUEUES, Topic } from './queues';

/** An outbox row as its handler gets it: ids only (handlers reload the state). */
export interface OutboxItem {
  outboxId: string;
  payload: Record<string, string>;
}

/** A job: due outbox rows of one topic and one client, oldest first (OutboxRelay). */
export interface OutboxGroup {
  clientId: string;
  items: OutboxItem[];
}

/**
 * Works off a group of rows of one topic and one client and answers, per row in their order, whether it is done
 * (true) or is to be tried again (false). A handler that throws has every row of the group tried again.
 */
export type OutboxGroupHandler = (items: OutboxItem[], clientId: string) => Promise<boolean[]>;

/** Called when a job of a topic finished, so the relay hands over the next rows it held back for that lane. */
export type LaneFreed = (topic: Topic) => void;

/**
 * Runs every outbox topic's BullMQ queue in the worker: one BullMQ worker per topic, waiting on BullMQ's blocking
 * call, running up to its lane's concurrency of groups at once. A job's done rows are marked done (grouped with other
 * jobs' marks); rows not done stay in the job, which BullMQ tries again with its back-off. A job that dies with its
 * worker is BullMQ's stalled job, taken up again; one lost with Redis is relayed again from the outbox.
 */
@Injectable()
export class OutboxWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxWorkers.name);
  private readonly handlers = new Map<Topic, OutboxGroupHandler>();
  private readonly workers: Worker[] = [];
  private readonly doneMarks: GroupCommit<DoneRows, null>;
  private laneFreed: LaneFreed = () => undefined;
  private lastErrorLog = 0;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly moduleRef: ModuleRef,
    private readonly metrics: EngineMetrics,
  ) {
    this.doneMarks = outboxDoneMarks(db);
  }

  /** Registers the handler of a topic (at module init; the workers start once the application is up). */
  handle(topic: Topic, handler: OutboxGroupHandler): void {
    if (this.handlers.has(topic)) throw new Error(`${topic} has a handler already`);
    this.handlers.set(topic, handler);
  }

  /** The relay of this process, told when a lane has room again. */
  onLaneFreed(laneFreed: LaneFreed): void {
    this.laneFreed = laneFreed;
  }

  onApplicationBootstrap(): void {
    const unhandled = QUEUES.filter((t) => !this.handlers.has(t));
    if (unhandled.length > 0) throw new Error(`no handler for topic(s) ${unhandled.join(', ')}`);
    for (const [topic, handler] of this.handlers) {
      const queue = this.moduleRef.get<Queue>(getQueueToken(topic), { strict: false });
      const worker = new OwnClientWorker(topic, (job: Job<OutboxGroup>) => this.run(topic, handler, job), {
        connection: queue.opts.connection,
        prefix: queue.opts.prefix,
        concurrency: LANES[topic].concurrency,
      });
      worker.on('error', (error) => this.warnThrottled(`worker ${topic}: ${error.message}`));
      worker.on('failed', (job, error) => {
        this.metrics.jobFailed(topic);
        this.warnThrottled(`${topic}: job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`);
      });
      this.workers.push(worker);
    }
  }

  /** Stops taking jobs and lets the jobs under way finish. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((worker) => worker.close()));
  }

  private async run(topic: Topic, handler: OutboxGroupHandler, job: Job<OutboxGroup>): Promise<void> {
    const { clientId, items } = job.data;
    let done: boolean[];
    try {
      done = await handler(items, clientId);
      if (done.length !== items.length) throw new Error(`${done.length} answers for ${items.length} rows`);
    } catch (error) {
      this.warnThrottled(`${topic}: a group of ${items.length} failed: ${(error as Error).message}`);
      done = items.map(() => false);
    }
    const finished = items.filter((_, i) => done[i]);
    const again = items.filter((_, i) => !done[i]);
    this.metrics.outboxWork(topic, 'done', finished.length);
    this.metrics.outboxWork(topic, 'retry', again.length);
    // A mark that fails (the database is away) leaves the row to the relay's sweep for lost work, which offers it again.
    if (finished.length > 0)
      await this.doneMarks.submit({ clientId, outboxIds: finished.map((item) => item.outboxId) }).catch(() => undefined);
    this.laneFreed(topic);
    if (again.length === 0) return;
    // The job keeps only the rows still to do, for BullMQ's next attempt after its back-off.
    if (finished.length > 0) await job.updateData({ clientId, items: again });
    throw new Error(`${again.length} of ${items.length} rows to be tried again`);
  }

  private warnThrottled(message: string): void {
    if (Date.now() - this.lastErrorLog < 30_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn(message);
  }
}

/** A handler of work done row by row, side by side: a row that fails is logged and tried again, the others are done. */
export function rowByRow(logger: Logger, work: (item: OutboxItem, clientId: string) => Promise<void>): OutboxGroupHandler {
  return async (items, clientId) => {
    const outcomes = await Promise.allSettled(items.map((item) => work(item, clientId)));
    outcomes.forEach(
      (o, i) => o.status === 'rejected' && logger.warn(`${JSON.stringify(items[i].payload)}: ${(o.reason as Error).message}`),
    );
    return outcomes.map((o) => o.status === 'fulfilled');
  };
}
