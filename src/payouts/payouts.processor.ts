import { Processor } from '@nestjs/bullmq';
import { Inject, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { PayoutReconciliationService } from './payout-reconciliation.service';
import { PayoutSettlementService } from './payout-settlement.service';

type PayoutsJob = { payoutId?: string; outboxId?: string };

/**
 * The payouts queue (submitting accepted payouts to the rail) and, in every worker, the reconciliation pass over
 * stuck payouts. Jobs carry ids only; the settlement service reloads the payout and acts only if it still applies.
 */
@Processor(QUEUES.payouts, { concurrency: 20 })
export class PayoutsProcessor extends OutboxJobProcessor<PayoutsJob> implements OnApplicationBootstrap, OnApplicationShutdown {
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling = false;

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
    if (job.name !== 'process') throw new Error(`unknown payouts job ${job.name}`);
    return this.settlement.process(job.data.payoutId!);
  }

  /** Workers share the pass safely (each claims its own batch); a quarter of the threshold keeps the delay small. */
  onApplicationBootstrap(): void {
    const everyMs = Math.max(100, Math.floor(this.config.payoutReconcileAfterMs / 4));
    this.reconcileTimer = setInterval(() => void this.reconcileOnce(), everyMs);
    this.reconcileTimer.unref();
  }

  onApplicationShutdown(): void {
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
  }

  private async reconcileOnce(): Promise<void> {
    if (this.reconciling) return;
    this.reconciling = true;
    try {
      const { checked, finished } = await this.reconciliation.reconcile();
      if (checked > 0) this.logger.log(`reconciliation: ${checked} stuck payout(s) re-checked, ${finished} resolved`);
    } catch (error) {
      this.logger.warn(`reconciliation pass failed: ${(error as Error).message}`);
    } finally {
      this.reconciling = false;
    }
  }
}
