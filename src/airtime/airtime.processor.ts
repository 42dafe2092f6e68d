import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { AirtimeProcessingService } from './airtime-processing.service';

type AirtimeJob = { requestId: string; first: string; last: string; outboxId?: string };

/** The airtime queue: one job per slice of a request's recipients; the slices of a request run in parallel. */
@Processor(QUEUES.airtime, { concurrency: 4 })
export class AirtimeProcessor extends OutboxJobProcessor<AirtimeJob> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly processing: AirtimeProcessingService,
  ) {
    super(QUEUES.airtime, db, metrics);
  }

  async process(job: Job<AirtimeJob>): Promise<void> {
    if (job.name !== 'process') throw new Error(`unknown airtime job ${job.name}`);
    return this.processing.process(job.data.requestId, Number(job.data.first), Number(job.data.last));
  }
}
