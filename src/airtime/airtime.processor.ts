import { Processor } from '@nestjs/bullmq';
import { Inject, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeReconciliationService } from './airtime-reconciliation.service';

type AirtimeJob = { requestId?: string; first?: string; last?: string; recipientId?: string; outboxId?: string };

/**
 * The airtime queue (one job per slice of a request's recipients, the slices of a request in parallel; one per
 * operator answer about a recipient) and, in every worker, the reconciliation pass over recipients left processing
 * or jammed.
 */
@Processor(QUEUES.airtime, { concurrency: 4 })
export class AirtimeProcessor extends OutboxJobProcessor<AirtimeJob> implements OnApplicationBootstrap, OnApplicationShutdown {
  private stopReconciling: (() => void) | null = null;

  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly processing: AirtimeProcessingService,
    private readonly reconciliation: AirtimeReconciliationService,
  ) {
    super(QUEUES.airtime, db, metrics);
  }

  async process(job: Job<AirtimeJob>): Promise<void> {
    // recheck: a rail's answer about one recipient arrived (operator callback or status query); booked as reconciliation would.
    if (job.name === 'recheck') {
      await this.processing.recheck([job.data.recipientId!]);
      return;
    }
    if (job.name !== 'process') throw new Error(`unknown airtime job ${job.name}`);
    return this.processing.process(job.data.requestId!, Number(job.data.first), Number(job.data.last));
  }

  onApplicationBootstrap(): void {
    this.stopReconciling = scheduleReconciliation(this.logger, 'airtime recipient(s)', this.config.payoutReconcileAfterMs, () =>
      this.reconciliation.reconcile(),
    );
  }

  onApplicationShutdown(): void {
    this.stopReconciling?.();
  }
}
