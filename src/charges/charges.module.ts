import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { SplitSettlementsModule } from '../split-settlements/split-settlements.module';
import { AuthorizationPageController } from './authorization-page.controller';
import { ChargesController } from './charges.controller';
import { ChargesService } from './charges.service';

/** Direct mobile-money charges: acceptance, OTP verification, status, and the authorisation page. */
@Module({
  imports: [CollectionsModule, SplitSettlementsModule],
  controllers: [ChargesController, AuthorizationPageController],
  providers: [ChargesService],
})
export class ChargesModule {}
