import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { OutboxItem, OutboxWorkers } from '../infra/queue/outbox-workers';
import { TOPICS } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { PayoutReconciliationService } from './payout-reconciliation.service';
import { PayoutSettlementService } from './payout-settlement.service';

/**
 * The worker side of payouts: groups of accepted payouts (BullMQ jobs relayed from the outbox) are submitted to the rail, groups of
 * rail answers (operator callbacks, status queries) are rechecked, and in every worker a reconciliation pass asks
 * again about stuck payouts. The outbox rows carry ids only; the settlement service reloads each payout and acts only
 * if it still applies.
 */
@Injectable()
export class PayoutsWorker implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PayoutsWorker.name);
  private stopReconciling: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workers: OutboxWorkers,
    private readonly settlement: PayoutSettlementService,
    private readonly reconciliation: PayoutReconciliationService,
  ) {}

  onModuleInit(): void {
    const payoutIds = (items: OutboxItem[]) => items.map((item) => item.payload.payoutId);
    this.workers.handle(TOPICS.processPayout, async (items) => (await this.settlement.process(payoutIds(items))).map((p) => p.done));
    // A rail's answer arrived (operator callback or status query): the payout takes it as reconciliation would.
    this.workers.handle(TOPICS.recheckPayout, async (items) => (await this.settlement.recheck(payoutIds(items))).map((p) => p.done));
  }

  onApplicationBootstrap(): void {
    this.stopReconciling = scheduleReconciliation(
      this.logger,
      'payout(s)',
      this.config.payoutReconcileAfterMs,
      () => this.reconciliation.reconcile(),
      () => this.reconciliation.nextDue(),
    );
  }

  onApplicationShutdown(): void {
    this.stopReconciling?.();
  }
}
