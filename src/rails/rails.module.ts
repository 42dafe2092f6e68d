import { Global, Module } from '@nestjs/common';
import { MOBILE_MONEY_RAIL } from './mobile-money.rail';
import { SandboxMobileMoneyRail } from './sandbox-mobile-money.rail';

/**
 * The payment rails. Only the sandbox operator exists so far; a production operator's adapter is bound here
 * by APP_ENV without touching the callers.
 */
@Global()
@Module({
  providers: [{ provide: MOBILE_MONEY_RAIL, useClass: SandboxMobileMoneyRail }],
  exports: [MOBILE_MONEY_RAIL],
})
export class RailsModule {}
