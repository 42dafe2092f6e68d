import { Global, Inject, Module, OnModuleInit, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { APP_CONFIG, ConfigError, type AppConfig } from '../infra/config/app-config';
import { AIRTIME_RAIL } from './airtime.rail';
import { MOBILE_MONEY_RAIL } from './mobile-money.rail';
import { PAYOUT_RAIL } from './payout.rail';
import { SandboxAirtimeRail } from './sandbox-airtime.rail';
import { SandboxMobileMoneyRail } from './sandbox-mobile-money.rail';
import { SandboxPayoutRail } from './sandbox-payout.rail';

interface RailBinding {
  /** How the rail is named in the start-up error. */
  name: string;
  token: symbol;
  sandbox: Type;
  /** The real operator's adapter; null while none exists, and then production refuses to start. */
  production: Type | null;
}

/** Every rail, one line each: a new rail (payouts, airtime, …) is added here and joins the production check. */
const RAILS: RailBinding[] = [
  {
    name: 'mobile-money',
    token: MOBILE_MONEY_RAIL,
    sandbox: SandboxMobileMoneyRail,
    production: null,
  },
  {
    name: 'payout',
    token: PAYOUT_RAIL,
    sandbox: SandboxPayoutRail,
    production: null,
  },
  {
    name: 'airtime',
    token: AIRTIME_RAIL,
    sandbox: SandboxAirtimeRail,
    production: null,
  },
];

/**
 * The payment rails, bound by APP_ENV without touching the callers. In production a rail still played by its
 * sandbox simulator would take real merchants' charges against test numbers, so the process refuses to start.
 */
@Global()
@Module({
  providers: RAILS.map((rail) => ({
    provide: rail.token,
    useClass: rail.production ?? rail.sandbox,
  })),
  exports: RAILS.map((rail) => rail.token),
})
export class RailsModule implements OnModuleInit {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.isSandbox) return;
    for (const rail of RAILS) {
      const bound: object = this.moduleRef.get(rail.token, { strict: false });
      if (Object.getPrototypeOf(bound)?.constructor === rail.sandbox) {
        throw new ConfigError(
          `no production adapter for the ${rail.name} rail; only the sandbox simulator exists, so APP_ENV=production cannot start`,
        );
      }
    }
  }
}
