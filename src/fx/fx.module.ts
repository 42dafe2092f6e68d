import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { RAILS_CONFIG, type RailsConfig } from '../rails/rails-config';
import { FX_RATE_SOURCE, type FxRateSource, SandboxFxRateSource } from './fx-rate-source';
import { FxRefreshService } from './fx-refresh.service';
import { FxController } from './fx.controller';
import { FxService } from './fx.service';
import { OpenExchangeRatesSource } from './open-exchange-rates.source';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';
import { RailsModule } from '../rails/rails.module';

/**
 * Rates, conversions, GET /v1/fx and the hourly refresh (scheduled by FxRefreshScheduler in the worker), from the
 * source FX_SOURCE names: Open Exchange Rates, or the sandbox's fixed quotes (refused in production by RailsModule).
 * `fx:set` types a rate by hand beside either.
 */
@Module({
  imports: [GatewayAuthModule, RailsModule],
  controllers: [FxController],
  providers: [
    FxService,
    FxRefreshService,
    {
      provide: FX_RATE_SOURCE,
      inject: [APP_CONFIG, RAILS_CONFIG],
      useFactory: (config: AppConfig, rails: RailsConfig): FxRateSource | null => {
        if (rails.openexchangerates) return new OpenExchangeRatesSource(rails.openexchangerates, config.fxMaxRateAgeMs);
        return config.isSandbox ? new SandboxFxRateSource() : null;
      },
    },
  ],
  exports: [FxService, FxRefreshService],
})
export class FxModule {}
