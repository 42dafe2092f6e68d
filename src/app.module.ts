import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { ClientServicesModule } from './client-services/client-services.module';
import { ClientsModule } from './clients/clients.module';
import { FxModule } from './fx/fx.module';
import { ConfigModule } from './infra/config/config.module';
import { DatabaseModule } from './infra/database/database.module';
import { HealthModule } from './infra/health/health.module';
import { LoggingModule } from './infra/logging/logging.module';
import { QueueModule } from './infra/queue/queue.module';
import { LedgerModule } from './ledger/ledger.module';
import { ProfilesModule } from './profiles/profiles.module';
import { StatementsModule } from './statements/statements.module';
import { TransactionsModule } from './transactions/transactions.module';
import { WalletsModule } from './wallets/wallets.module';

/** What every process role shares: configuration, logs, Postgres, Redis and the domain core. */
@Module({
  imports: [ConfigModule, LoggingModule, DatabaseModule, QueueModule, LedgerModule, FxModule, ClientsModule, AuthModule],
})
export class CoreModule {}

export type ProcessRole = 'api' | 'worker' | 'sandbox';

/** The HTTP surface. */
@Module({ imports: [CoreModule, HealthModule, ProfilesModule, WalletsModule, ClientServicesModule, TransactionsModule, StatementsModule] })
export class ApiModule {}

/** Queue processors, schedulers and the outbox relay. */
@Module({ imports: [CoreModule] })
export class WorkerModule {}

export function rootModule(role: ProcessRole): DynamicModule {
  const imports = role === 'api' ? [ApiModule] : role === 'worker' ? [WorkerModule] : [ApiModule, WorkerModule];
  return { module: class AppModule {}, imports };
}
