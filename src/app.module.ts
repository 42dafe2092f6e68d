import { DynamicModule, Module } from '@nestjs/common';
import { AirtimeModule } from './airtime/airtime.module';
import { AirtimeWorker } from './airtime/airtime.worker';
import { AuthModule } from './auth/auth.module';
import { GatewayAuthModule } from './auth/gateway/gateway-auth.module';
import { CallbackDeliverer } from './callbacks/delivery/callback-deliverer.service';
import { CallbackRelay } from './callbacks/delivery/callback-relay.service';
import { CallbacksModule } from './callbacks/callbacks.module';
import { ClientServicesModule } from './client-services/client-services.module';
import { ChargesModule } from './charges/charges.module';
import { CheckoutModule } from './checkout/checkout.module';
import { ClientsModule } from './clients/clients.module';
import { PayoutRequestsModule } from './payout-requests/payout-requests.module';
import { FloatModule } from './float/float.module';
import { FxRefreshScheduler } from './fx/fx-refresh.scheduler';
import { FxModule } from './fx/fx.module';
import { ConfigModule } from './infra/config/config.module';
import { DatabaseModule } from './infra/database/database.module';
import { PartitionsScheduler } from './infra/database/partitions.scheduler';
import { HealthModule } from './infra/health/health.module';
import { LoggingModule } from './infra/logging/logging.module';
import { MetricsController } from './infra/metrics/metrics.controller';
import { MetricsModule } from './infra/metrics/metrics.module';
import { NotificationsModule } from './notifications/notifications.module';
import { NotificationsWorker } from './notifications/notifications.worker';
import { PayoutsModule } from './payouts/payouts.module';
import { PortalModule } from './portal/portal.module';
import { PayoutsWorker } from './payouts/payouts.worker';
import { OutboxRelay } from './infra/queue/outbox-relay.service';
import { OutboxWorkers } from './infra/queue/outbox-workers';
import { QueueModule } from './infra/queue/queue.module';
import { ThrottlingModule } from './infra/throttling/throttling.module';
import { LedgerModule } from './ledger/ledger.module';
import { PaymentStatementModule } from './payment-statement/payment-statement.module';
import { CollectionsModule } from './collections/collections.module';
import { ProfilesModule } from './wallets/profiles.module';
import { RailsModule } from './rails/rails.module';
import { ReconciliationModule } from './reconciliation/reconciliation.module';
import { ReconciliationScheduler } from './reconciliation/reconciliation.scheduler';
import { AfricasTalkingCallbacksModule } from './rails/africastalking/africastalking-callbacks.module';
import { MpesaCallbacksModule } from './rails/mpesa/mpesa-callbacks.module';
import { RailReconciliationScheduler } from './rails/rail-reconciliation.scheduler';
import { CollectionReversalsModule } from './collection-reversals/collection-reversals.module';
import { SplitSettlementsModule } from './split-settlements/split-settlements.module';
import { StatementsModule } from './statements/statements.module';
import { TransactionsModule } from './transactions/transactions.module';
import { WalletsModule } from './wallets/wallets.module';
import { PaymentsProcessor } from './collections/payments-queue.processor';
import { ReversalsProcessor } from './collection-reversals/reversals-queue.processor';

/** What every process role shares: configuration, logs, Postgres, Redis, metrics and the domain core. */
@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    DatabaseModule,
    QueueModule,
    MetricsModule,
    LedgerModule,
    FxModule,
    RailsModule,
    ClientsModule,
    AuthModule,
    GatewayAuthModule,
    CallbacksModule,
    FloatModule,
  ],
})
export class CoreModule {}

export type ProcessRole = 'api' | 'worker' | 'sandbox';

/** The HTTP surface. */
@Module({
  imports: [
    CoreModule,
    ThrottlingModule,
    HealthModule,
    ProfilesModule,
    WalletsModule,
    ClientServicesModule,
    TransactionsModule,
    StatementsModule,
    ChargesModule,
    CheckoutModule,
    SplitSettlementsModule,
    CollectionReversalsModule,
    PaymentStatementModule,
    AirtimeModule,
    PayoutRequestsModule,
    PortalModule,
    MpesaCallbacksModule,
    AfricasTalkingCallbacksModule,
  ],
  controllers: [MetricsController],
})
export class ApiModule {}

/**
 * The outbox relay and the BullMQ workers of every topic, schedulers and the callback deliverer: the money cores (payments, payouts,
 * airtime) and the reversal step.
 */
@Module({
  imports: [
    CoreModule,
    RailsModule,
    ClientsModule,
    CallbacksModule,
    FxModule,
    CollectionsModule,
    CollectionReversalsModule,
    AirtimeModule,
    PayoutsModule,
    NotificationsModule,
    ReconciliationModule,
  ],
  providers: [
    OutboxRelay,
    OutboxWorkers,
    PaymentsProcessor,
    ReversalsProcessor,
    CallbackRelay,
    CallbackDeliverer,
    AirtimeWorker,
    PayoutsWorker,
    NotificationsWorker,
    FxRefreshScheduler,
    RailReconciliationScheduler,
    ReconciliationScheduler,
    PartitionsScheduler,
  ],
})
export class WorkerModule {}

export function rootModule(role: ProcessRole): DynamicModule {
  const imports = role === 'api' ? [ApiModule] : role === 'worker' ? [WorkerModule] : [ApiModule, WorkerModule];
  return { module: class AppModule {}, imports };
}
