import { Module } from '@nestjs/common';
import { FloatModule } from '../float/float.module';
import { CollectionsModule } from '../collections/collections.module';
import { PayoutsModule } from '../payouts/payouts.module';
import { ReconciliationModule } from '../reconciliation/reconciliation.module';
import { StatementsModule } from '../statements/statements.module';
import { PortalAuthController } from './portal-auth.controller';
import { PortalSessionGuard } from './portal-session.guard';
import { PortalSessionStrategy } from './portal-session.strategy';
import { PortalSessionsService } from './portal-sessions.service';
import { PortalSignInService } from './portal-sign-in.service';
import { PortalController } from './portal.controller';
import { PortalService } from './portal.service';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { ClientsModule } from '../clients/clients.module';
import { AuthModule } from '../auth/auth.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** The merchant portal at /portal: server-rendered pages over the client's keys, callbacks, payments, payouts, statements and reconciliation differences. */
@Module({
  imports: [
    FloatModule,
    CollectionsModule,
    PayoutsModule,
    ReconciliationModule,
    StatementsModule,
    CallbacksModule,
    ClientsModule,
    AuthModule,
    GatewayAuthModule,
  ],
  controllers: [PortalAuthController, PortalController],
  providers: [PortalSessionsService, PortalSignInService, PortalSessionStrategy, PortalSessionGuard, PortalService],
})
export class PortalModule {}
