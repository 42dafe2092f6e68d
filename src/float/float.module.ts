import { Module } from '@nestjs/common';
import { FloatBalanceController } from './float-balance.controller';
import { FloatBalanceService } from './float-balance.service';
import { FloatAlertsService } from './float-alerts.service';
import { FloatHoldsService } from './float-holds.service';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Holds on client services' floats (payouts, B2B, IMT, airtime), their low-balance alerts and the float balance endpoint. */
@Module({
  imports: [GatewayAuthModule],
  providers: [FloatHoldsService, FloatBalanceService, FloatAlertsService],
  controllers: [FloatBalanceController],
  exports: [FloatHoldsService, FloatBalanceService, FloatAlertsService],
})
export class FloatModule {}
