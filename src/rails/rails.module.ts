import { Global, Inject, Module, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { APP_CONFIG, ConfigError, type AppConfig } from '../infra/config/app-config';
import { ReadinessReports } from '../infra/health/readiness-reports';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { AfricasTalkingAirtimeRail } from './africastalking/africastalking-airtime.rail';
import { AfricasTalkingGateway } from './africastalking/africastalking-gateway';
import { AIRTIME_RAIL } from './airtime.rail';
import { MOBILE_MONEY_RAIL } from './mobile-money.rail';
import { JengaGateway } from './jenga/jenga-gateway';
import { JengaPayoutRail } from './jenga/jenga-payout.rail';
import { MpesaGateway } from './mpesa/mpesa-gateway';
import { MpesaMobileMoneyRail } from './mpesa/mpesa-mobile-money.rail';
import { MpesaPayoutRail } from './mpesa/mpesa-payout.rail';
import { PAYOUT_RAIL, PayoutRail } from './payout.rail';
import { RailHealth } from './rail-health';
import { RailMetrics } from './rail-metrics';
import { RailRequestsRepository } from './rail-requests.repository';
import { loadRailsConfig, RAILS_CONFIG, type RailsConfig } from './rails-config';
import { RoutedPayoutRail } from './routed-payout.rail';
import { SandboxAirtimeRail } from './sandbox-airtime.rail';
import { SandboxMobileMoneyRail } from './sandbox-mobile-money.rail';
import { SandboxPayoutRail } from './sandbox-payout.rail';

/**
 * The payment rails, each chosen by its variable (provider contract §11): RAIL_MOBILE_MONEY (charges, and payouts
 * to phones, paybills and tills), RAIL_BANK (payouts to bank accounts), RAIL_AIRTIME. A process in production whose
 * rail would be the sandbox simulator refuses to start, naming it: it would take real merchants' money against
 * test numbers.
 */
@Global()
@Module({
  providers: [
    {
      provide: RAILS_CONFIG,
      inject: [APP_CONFIG],
      useFactory: (app: AppConfig) => loadRailsConfig(process.env, app.appEnv, app.publicBaseUrl, (path) => readFileSync(path)),
    },
    RailRequestsRepository,
    RailHealth,
    RailMetrics,
    {
      provide: MpesaGateway,
      inject: [RAILS_CONFIG, RailRequestsRepository, RailHealth],
      useFactory: (rails: RailsConfig, requests: RailRequestsRepository, health: RailHealth) =>
        rails.mpesa ? new MpesaGateway(rails, requests, health) : null,
    },
    {
      provide: JengaGateway,
      inject: [RAILS_CONFIG, RailRequestsRepository, RailHealth],
      useFactory: (rails: RailsConfig, requests: RailRequestsRepository, health: RailHealth) =>
        rails.jenga ? new JengaGateway(rails, requests, health) : null,
    },
    {
      provide: AfricasTalkingGateway,
      inject: [RAILS_CONFIG, RailRequestsRepository, EngineMetrics, RailHealth],
      useFactory: (rails: RailsConfig, requests: RailRequestsRepository, metrics: EngineMetrics, health: RailHealth) =>
        rails.africastalking ? new AfricasTalkingGateway(rails, requests, metrics, health) : null,
    },
    {
      provide: MOBILE_MONEY_RAIL,
      inject: [RAILS_CONFIG, APP_CONFIG, MpesaGateway],
      useFactory: (rails: RailsConfig, app: AppConfig, mpesa: MpesaGateway | null) =>
        rails.mobileMoney === 'mpesa' ? new MpesaMobileMoneyRail(mpesa!) : new SandboxMobileMoneyRail(app),
    },
    {
      provide: PAYOUT_RAIL,
      inject: [RAILS_CONFIG, APP_CONFIG, MpesaGateway, JengaGateway],
      useFactory: (rails: RailsConfig, app: AppConfig, mpesa: MpesaGateway | null, jenga: JengaGateway | null): PayoutRail => {
        const simulator = new SandboxPayoutRail(app);
        if (rails.mobileMoney === 'sandbox' && rails.bank === 'sandbox') return simulator;
        return new RoutedPayoutRail(
          rails.mobileMoney === 'mpesa' ? new MpesaPayoutRail(mpesa!) : simulator,
          rails.bank === 'jenga' ? new JengaPayoutRail(jenga!) : simulator,
        );
      },
    },
    {
      provide: AIRTIME_RAIL,
      inject: [RAILS_CONFIG, APP_CONFIG, AfricasTalkingGateway],
      useFactory: (rails: RailsConfig, app: AppConfig, africastalking: AfricasTalkingGateway | null) =>
        rails.airtime === 'africastalking' ? new AfricasTalkingAirtimeRail(africastalking!) : new SandboxAirtimeRail(app),
    },
  ],
  exports: [
    RAILS_CONFIG,
    RailRequestsRepository,
    RailHealth,
    MpesaGateway,
    JengaGateway,
    AfricasTalkingGateway,
    MOBILE_MONEY_RAIL,
    PAYOUT_RAIL,
    AIRTIME_RAIL,
  ],
})
export class RailsModule implements OnModuleInit {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly health: RailHealth,
    @Optional() private readonly readiness?: ReadinessReports,
  ) {}

  onModuleInit(): void {
    // Each rail in /health/ready: its circuit and last success, or the simulator.
    this.readiness?.add('rails', async () => Object.fromEntries((await this.health.report()).map(({ rail, ...report }) => [rail, report])));
    if (this.rails.problems.length) throw new ConfigError(`Invalid configuration: ${this.rails.problems.join('; ')}`);
    if (this.config.isSandbox) return;
    const bound = (token: symbol): object => this.moduleRef.get(token, { strict: false });
    const payout = bound(PAYOUT_RAIL);
    const simulated = [
      {
        name: 'mobile-money',
        variable: `RAIL_MOBILE_MONEY=${this.rails.mobileMoney}`,
        simulator: isExactly(bound(MOBILE_MONEY_RAIL), SandboxMobileMoneyRail),
      },
      {
        name: 'bank',
        variable: `RAIL_BANK=${this.rails.bank}`,
        simulator: payout instanceof RoutedPayoutRail ? isExactly(payout.bank, SandboxPayoutRail) : isExactly(payout, SandboxPayoutRail),
      },
      { name: 'airtime', variable: `RAIL_AIRTIME=${this.rails.airtime}`, simulator: isExactly(bound(AIRTIME_RAIL), SandboxAirtimeRail) },
    ].filter((rail) => rail.simulator);
    if (simulated.length) {
      const named = simulated.map((rail) => `the ${rail.name} rail (${rail.variable})`).join(', ');
      throw new ConfigError(
        `no production adapter for ${named}: only the sandbox simulator would play it, so APP_ENV=production cannot start`,
      );
    }
  }
}

/** The simulator itself, not a subclass (tests bind subclasses as stand-ins for real adapters). */
function isExactly(instance: object, type: abstract new (...args: never[]) => object): boolean {
  return Object.getPrototypeOf(instance)?.constructor === type;
}
