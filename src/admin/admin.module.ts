import { Module } from '@nestjs/common';
import { AirtimeModule } from '../airtime/airtime.module';
import { CoreModule } from '../app.module';
import { ClientServicesModule } from '../client-services/client-services.module';
import { PayoutsModule } from '../payouts/payouts.module';
import { ProfilesModule } from '../wallets/profiles.module';
import { TransactionsModule } from '../transactions/transactions.module';
import { WalletsModule } from '../wallets/wallets.module';
import { SeedService } from './seed.service';
import { AuthModule } from '../auth/auth.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';
import { ClientsModule } from '../clients/clients.module';
import { FxModule } from '../fx/fx.module';
import { FloatModule } from '../float/float.module';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';

/** Everything the operator CLI needs: the domain services, no HTTP and no queue processors. */
@Module({
  imports: [
    CoreModule,
    ProfilesModule,
    WalletsModule,
    ClientServicesModule,
    TransactionsModule,
    PayoutsModule,
    AirtimeModule,
    AuthModule,
    GatewayAuthModule,
    ClientsModule,
    FxModule,
    FloatModule,
    ReconciliationModule,
  ],
  providers: [SeedService],
})
export class AdminModule {}
