import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { FX_RATE_SOURCE, SandboxFxRateSource } from './fx-rate-source';
import { FxRefreshService } from './fx-refresh.service';
import { FxController } from './fx.controller';
import { FxService } from './fx.service';

/**
 * Rates, conversions, GET /v1/fx and the hourly refresh (scheduled by FxRefreshScheduler in the worker). Only the
 * sandbox has a rate source today; production gets one by binding a market feed's adapter here.
 */
@Global()
@Module({
  controllers: [FxController],
  providers: [
    FxService,
    FxRefreshService,
    {
      provide: FX_RATE_SOURCE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => (config.isSandbox ? new SandboxFxRateSource() : null),
    },
  ],
  exports: [FxService, FxRefreshService],
})
export class FxModule {}
