import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ClaimedItem, OutboxClaimer } from '../infra/queue/outbox-claimer';
import { TOPICS } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { PayoutReconciliationService } from './payout-reconciliation.service';
import { PayoutSettlementService } from './payout-settlement.service';

/** Payouts one claim takes, and so one group applies in one transaction. */
const GROUP = 100;

/**
 * The worker side of payouts: groups of accepted payouts claimed from the outbox are submitted to the rail, groups of
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
    private readonly claimer: OutboxClaimer,
    private readonly settlement: PayoutSettlementService,
    private readonly reconciliation: PayoutReconciliationService,
  ) {}

  onModuleInit(): void {
    const payoutIds = (items: ClaimedItem[]) => items.map((item) => item.payload.payoutId);
    this.claimer.handle(TOPICS.processPayout, async (items) => (await this.settlement.process(payoutIds(items))).map((p) => p.done), {
      batch: GROUP,
      held: 2 * GROUP,
    });
    // A rail's answer arrived (operator callback or status query): the payout takes it as reconciliation would.
    this.claimer.handle(TOPICS.recheckPayout, async (items) => (await this.settlement.recheck(payoutIds(items))).map((p) => p.done), {
      batch: GROUP,
      held: 2 * GROUP,
    });
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
