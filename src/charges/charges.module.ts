import { Module } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module';
import { SettlementsModule } from '../settlements/settlements.module';
import { AuthorizationPageController } from './authorization-page.controller';
import { ChargesController } from './charges.controller';
import { ChargesService } from './charges.service';

/** Direct mobile-money charges: acceptance, OTP verification, status, and the authorisation page. */
@Module({
  imports: [PaymentsModule, SettlementsModule],
  controllers: [ChargesController, AuthorizationPageController],
  providers: [ChargesService],
})
export class ChargesModule {}
