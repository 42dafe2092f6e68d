import { Module } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module';
import { SettlementsModule } from '../settlements/settlements.module';
import { CheckoutPageController } from './checkout-page.controller';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';

/** Hosted checkout: the merchant's API (open a session, its status) and the payer's page (view, pay). */
@Module({
  imports: [PaymentsModule, SettlementsModule],
  controllers: [CheckoutController, CheckoutPageController],
  providers: [CheckoutService],
})
export class CheckoutModule {}
