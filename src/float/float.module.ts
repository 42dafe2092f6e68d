import { Module } from '@nestjs/common';
import { FloatBalanceController } from './float-balance.controller';
import { FloatBalanceService } from './float-balance.service';
import { FloatHoldsService } from './float-holds.service';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Holds on client services' floats (payouts, B2B, IMT, airtime) and the float balance endpoint. */
@Module({
  imports: [GatewayAuthModule],
  providers: [FloatHoldsService, FloatBalanceService],
  controllers: [FloatBalanceController],
  exports: [FloatHoldsService, FloatBalanceService],
})
export class FloatModule {}
