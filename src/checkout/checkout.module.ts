import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { SplitSettlementsModule } from '../split-settlements/split-settlements.module';
import { CheckoutPageController } from './checkout-page.controller';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { RailsModule } from '../rails/rails.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Hosted checkout: the merchant's API (open a session, its status) and the payer's page (view, pay). */
@Module({
  imports: [CollectionsModule, SplitSettlementsModule, CallbacksModule, RailsModule, GatewayAuthModule],
  controllers: [CheckoutController, CheckoutPageController],
  providers: [CheckoutService],
})
export class CheckoutModule {}
