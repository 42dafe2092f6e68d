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
import { PayoutReconciliationService } from './payout-reconciliation.service';
import { PayoutSettlementService } from './payout-settlement.service';

type PayoutsJob = { payoutId?: string; outboxId?: string };

/**
 * The payouts queue (submitting accepted payouts to the rail) and, in every worker, the reconciliation pass over
 * stuck payouts. Jobs carry ids only; the settlement service reloads the payout and acts only if it still applies.
 */
@Processor(QUEUES.payouts, { concurrency: 20 })
export class PayoutsProcessor extends OutboxJobProcessor<PayoutsJob> implements OnApplicationBootstrap, OnApplicationShutdown {
  private stopReconciling: (() => void) | null = null;

  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settlement: PayoutSettlementService,
    private readonly reconciliation: PayoutReconciliationService,
  ) {
    super(QUEUES.payouts, db, metrics);
  }

  async process(job: Job<PayoutsJob>): Promise<void> {
    // recheck: a rail's answer arrived (operator callback or status query); the payout takes it as reconciliation would.
    if (job.name === 'recheck') {
      await this.settlement.recheck(job.data.payoutId!);
      return;
    }
    if (job.name !== 'process') throw new Error(`unknown payouts job ${job.name}`);
    return this.settlement.process(job.data.payoutId!);
  }

  onApplicationBootstrap(): void {
    this.stopReconciling = scheduleReconciliation(this.logger, 'payout(s)', this.config.payoutReconcileAfterMs, () =>
      this.reconciliation.reconcile(),
    );
  }

  onApplicationShutdown(): void {
    this.stopReconciling?.();
  }
}
