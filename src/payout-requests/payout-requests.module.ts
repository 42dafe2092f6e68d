import { Module } from '@nestjs/common';
import { PayoutsModule } from '../payouts/payouts.module';
import { PayoutRequestsService } from './payout-requests.service';
import { PayoutsController } from './payouts.controller';

/** The request side of the disbursement gateway: local payouts, IMT and B2B (acceptance and status). */
@Module({
  imports: [PayoutsModule],
  controllers: [PayoutsController],
  providers: [PayoutRequestsService],
})
export class PayoutRequestsModule {}
