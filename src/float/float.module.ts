import { Module } from '@nestjs/common';
import { FloatHoldsService } from './float-holds.service';

/** Holds on client services' floats (payouts, B2B, IMT, airtime) and the float balance endpoint. */
@Module({
  providers: [FloatHoldsService],
  exports: [FloatHoldsService],
})
export class FloatModule {}
