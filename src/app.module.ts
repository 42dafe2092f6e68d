import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { GatewayAuthModule } from './auth/gateway/gateway-auth.module';
import { CallbackDeliveryProcessor } from './callbacks/callback-delivery.processor';
import { CallbackSweeper } from './callbacks/callback-sweeper.service';
import { CallbacksModule } from './callbacks/callbacks.module';
import { ClientServicesModule } from './client-services/client-services.module';
import { ClientsModule } from './clients/clients.module';
import { CollectionsModule } from './collections/collections.module';
import { PaymentsProcessor } from './collections/payments.processor';
import { FxModule } from './fx/fx.module';
import { ConfigModule } from './infra/config/config.module';
import { DatabaseModule } from './infra/database/database.module';
import { HealthModule } from './infra/health/health.module';
import { LoggingModule } from './infra/logging/logging.module';
import { MetricsController } from './infra/metrics/metrics.controller';
import { MetricsModule } from './infra/metrics/metrics.module';
import { OutboxRelay } from './infra/queue/outbox-relay.service';
import { QueueModule } from './infra/queue/queue.module';
import { ThrottlingModule } from './infra/throttling/throttling.module';
import { LedgerModule } from './ledger/ledger.module';
import { ProfilesModule } from './profiles/profiles.module';
import { RailsModule } from './rails/rails.module';
import { StatementsModule } from './statements/statements.module';
import { TransactionsModule } from './transactions/transactions.module';
import { WalletsModule } from './wallets/wallets.module';

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
    CollectionsModule,
  ],
  controllers: [MetricsController],
})
export class ApiModule {}

/** Queue processors, schedulers and the outbox relay. */
@Module({
  imports: [CoreModule, CollectionsModule],
  providers: [OutboxRelay, PaymentsProcessor, CallbackDeliveryProcessor, CallbackSweeper],
})
export class WorkerModule {}

export function rootModule(role: ProcessRole): DynamicModule {
  const imports = role === 'api' ? [ApiModule] : role === 'worker' ? [WorkerModule] : [ApiModule, WorkerModule];
  return { module: class AppModule {}, imports };
}
