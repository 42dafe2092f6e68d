import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { CollectionReversalsService } from './collection-reversals.service';

type ReversalsJob = { reversalId: string; outboxId?: string };

/** Collection reversals (worker role), one job per step: the service reloads the reversal and advances it if it still applies. */
@Processor(QUEUES.reversals, { concurrency: 50 })
export class ReversalsProcessor extends OutboxJobProcessor<ReversalsJob> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly reversals: CollectionReversalsService,
  ) {
    super(QUEUES.reversals, db, metrics);
  }

  async process(job: Job<ReversalsJob>): Promise<void> {
    if (job.name !== 'process') throw new Error(`unknown reversals job ${job.name}`);
    return this.reversals.advance(job.data.reversalId);
  }
}
