import { Module } from '@nestjs/common';
import { PayoutsModule } from '../payouts/payouts.module';
import { PayoutRequestsService } from './payout-requests.service';
import { PayoutsController } from './payouts.controller';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { RailsModule } from '../rails/rails.module';

/** The request side of the disbursement gateway: local payouts, IMT and B2B (acceptance and status). */
@Module({
  imports: [PayoutsModule, GatewayAuthModule, CallbacksModule, RailsModule],
  controllers: [PayoutsController],
  providers: [PayoutRequestsService],
})
export class PayoutRequestsModule {}
