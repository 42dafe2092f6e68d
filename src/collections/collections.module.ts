import { Module, OnModuleInit } from '@nestjs/common';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PaymentSettlementService } from './payment-settlement.service';
import { OLDEST_UNRESOLVED_PAYMENT_SQL, PaymentsRepository } from './payments.repository';
import { PaymentsService } from './payments.service';
import { RailsModule } from '../rails/rails.module';

/**
 * The payments core, shared by the request side (charges, checkout, reversals, settlements, payment statement)
 * and the worker: the payment records and their SQL, their status changes and announcements, the session status
 * they drive, and settlement with the operator. It depends on the ledger, rails and outbox only (its announcements
 * are SQL, through callback_schedule).
 */
@Module({
  imports: [RailsModule],
  providers: [PaymentsRepository, PaymentsService, CheckoutSessionsService, PaymentSettlementService],
  exports: [PaymentsRepository, PaymentsService, CheckoutSessionsService, PaymentSettlementService],
})
export class CollectionsModule implements OnModuleInit {
  constructor(private readonly metrics: EngineMetrics) {}

  /** Rail health in /metrics: the oldest payment still waiting for the operator. */
  onModuleInit(): void {
    this.metrics.addRailWait('payments', OLDEST_UNRESOLVED_PAYMENT_SQL);
  }
}
