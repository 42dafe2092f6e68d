import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import type { GroupCommit } from '../database/group-commit';
import { EngineMetrics } from '../metrics/engine-metrics';
import { outboxDoneMarks } from './outbox-done-marks';

/**
 * Base of every processor fed by the outbox: a finished job marks its outbox row done (so the relay never
 * re-sends it), and failures are counted and logged. Subclasses only implement `process`. The done marks of jobs
 * finishing together are one statement (group commit): a mark is bookkeeping, not worth a commit of its own per job.
 */
export abstract class OutboxJobProcessor<T extends { outboxId?: string }> extends WorkerHost {
  protected readonly logger = new Logger(this.constructor.name);
  private lastErrorLog = 0;
  private readonly doneMarks: GroupCommit<string, null>;

  protected constructor(
    private readonly queueName: string,
    protected readonly db: DataSource,
    protected readonly metrics: EngineMetrics,
  ) {
    super();
    this.doneMarks = outboxDoneMarks(db);
  }

  abstract process(job: Job<T>): Promise<void>;

  @OnWorkerEvent('completed')
  async onCompleted(job: Job<T>): Promise<void> {
    // A mark that fails (the database is away) leaves the row to the relay's sweep, which re-sends a job once.
    if (job.data.outboxId) await this.doneMarks.submit(job.data.outboxId).catch(() => undefined);
  }

  /** Connection errors while Redis is away: logged once in a while, not printed by BullMQ on every retry. */
  @OnWorkerEvent('error')
  onError(error: Error): void {
    if (Date.now() - this.lastErrorLog < 30_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn(`worker ${this.queueName}: ${error.message}`);
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<T> | undefined, error: Error): void {
    this.metrics.jobFailed(this.queueName);
    this.logger.warn(`job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`);
  }
}
