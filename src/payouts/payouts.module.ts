import { Module, OnModuleInit } from '@nestjs/common';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { FloatModule } from '../float/float.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { PayoutAnnouncer } from './payout-announcer.service';
import { PayoutReconciliationService } from './payout-reconciliation.service';
import { PayoutSettlementService } from './payout-settlement.service';
import { OLDEST_UNRESOLVED_PAYOUT_SQL, PayoutsRepository } from './payouts.repository';
import { RailsModule } from '../rails/rails.module';

/**
 * The payouts core: the payouts table, its status transitions and results, their announcement (callbacks, SMS),
 * settlement with the rail and reconciliation. Request handling (src/payout-requests) and the worker build on it.
 */
@Module({
  imports: [CallbacksModule, FloatModule, NotificationsModule, RailsModule],
  providers: [PayoutsRepository, PayoutAnnouncer, PayoutSettlementService, PayoutReconciliationService],
  exports: [PayoutsRepository, PayoutSettlementService, PayoutReconciliationService],
})
export class PayoutsModule implements OnModuleInit {
  constructor(private readonly metrics: EngineMetrics) {}

  /** Rail health in /metrics: the oldest payout still waiting for its rail. */
  onModuleInit(): void {
    this.metrics.addRailWait('payouts', OLDEST_UNRESOLVED_PAYOUT_SQL);
  }
}
