import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { SplitSettlementsModule } from '../split-settlements/split-settlements.module';
import { AuthorizationPageController } from './authorization-page.controller';
import { ChargesController } from './charges.controller';
import { ChargesService } from './charges.service';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { RailsModule } from '../rails/rails.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Direct mobile-money charges: acceptance, OTP verification, status, and the authorisation page. */
@Module({
  imports: [CollectionsModule, SplitSettlementsModule, CallbacksModule, RailsModule, GatewayAuthModule],
  controllers: [ChargesController, AuthorizationPageController],
  providers: [ChargesService],
})
export class ChargesModule {}
