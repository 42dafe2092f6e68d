import { Global, Module } from '@nestjs/common';
import { AIRTIME_RAIL } from './airtime.rail';
import { MOBILE_MONEY_RAIL } from './mobile-money.rail';
import { PAYOUT_RAIL } from './payout.rail';
import { SandboxAirtimeRail } from './sandbox-airtime.rail';
import { SandboxMobileMoneyRail } from './sandbox-mobile-money.rail';
import { SandboxPayoutRail } from './sandbox-payout.rail';

/**
 * The payment rails. Only the sandbox operator exists so far; a production operator's adapter is bound here
 * by APP_ENV without touching the callers.
 */
@Global()
@Module({
  providers: [
    { provide: MOBILE_MONEY_RAIL, useClass: SandboxMobileMoneyRail },
    { provide: AIRTIME_RAIL, useClass: SandboxAirtimeRail },
    { provide: PAYOUT_RAIL, useClass: SandboxPayoutRail },
  ],
  exports: [MOBILE_MONEY_RAIL, AIRTIME_RAIL, PAYOUT_RAIL],
})
export class RailsModule {}
