import { Inject, Module, OnModuleInit, Optional } from '@nestjs/common';
import { REDIS } from '../infra/queue/queue.module';
import type { RedisClient } from '../infra/queue/redis';
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
import { DarajaResultInbox } from './mpesa/daraja-result-inbox';
import { MpesaGateway } from './mpesa/mpesa-gateway';
import { MpesaStatement } from './mpesa/mpesa-statement';
import { JengaStatement } from './jenga/jenga-statement';
import { AfricasTalkingStatement } from './africastalking/africastalking-statement';
import { OPERATOR_STATEMENTS, OperatorStatement } from './operator-statement';
import { SANDBOX_BALANCES, SandboxBalances, SandboxStatement } from './sandbox-statement';
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
 * rail would be the sandbox simulator (FX_SOURCE=sandbox included) refuses to start, naming it with every missing
 * or malformed variable in one message: it would take real merchants' money against test numbers.
 */
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
      inject: [RAILS_CONFIG, RailRequestsRepository, RailHealth, EngineMetrics],
      useFactory: (rails: RailsConfig, requests: RailRequestsRepository, health: RailHealth, metrics: EngineMetrics) =>
        rails.mpesa ? new MpesaGateway(rails, requests, health, metrics) : null,
    },
    {
      provide: JengaGateway,
      inject: [RAILS_CONFIG, RailRequestsRepository, RailHealth, EngineMetrics],
      useFactory: (rails: RailsConfig, requests: RailRequestsRepository, health: RailHealth, metrics: EngineMetrics) =>
        rails.jenga ? new JengaGateway(rails, requests, health, metrics) : null,
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
    { provide: DarajaResultInbox, inject: [REDIS], useFactory: (redis: RedisClient) => new DarajaResultInbox(redis) },
    {
      // One per reconciled rail: the real operator's listing where the rail choice names it, else the simulator's.
      provide: OPERATOR_STATEMENTS,
      inject: [RAILS_CONFIG, DarajaResultInbox, MpesaGateway, JengaGateway, AfricasTalkingGateway, ModuleRef],
      useFactory: (
        rails: RailsConfig,
        inbox: DarajaResultInbox,
        mpesa: MpesaGateway | null,
        jenga: JengaGateway | null,
        africastalking: AfricasTalkingGateway | null,
        moduleRef: ModuleRef,
      ): OperatorStatement[] => {
        // Bound by the reconciliation module, which imports this one: found when a balance is asked for, not at build.
        const balances: SandboxBalances = (rail) => moduleRef.get<SandboxBalances>(SANDBOX_BALANCES, { strict: false })(rail);
        return [
          mpesa
            ? new MpesaStatement(mpesa, inbox, {
                resultWaitMs: mpesa.config.resultWaitMs,
                nominatedNumber: mpesa.config.pullNominatedNumber,
              })
            : new SandboxStatement('mpesa', balances),
          jenga ? new JengaStatement(jenga.config, jenga.client) : new SandboxStatement('jenga', balances),
          africastalking ? new AfricasTalkingStatement(africastalking.client) : new SandboxStatement('africastalking', balances),
        ];
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
    DarajaResultInbox,
    OPERATOR_STATEMENTS,
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
    // Every problem in one message: a missing variable and a simulated rail are both fixed before the next start.
    const problems = [...this.rails.problems];
    if (!this.config.isSandbox) {
      const simulated = this.simulatedRails().map((rail) => `the ${rail.name} (${rail.variable})`);
      if (simulated.length) {
        problems.push(
          `no production adapter for ${simulated.join(', ')}: only the sandbox simulator would play it, so APP_ENV=production cannot start`,
        );
      }
    }
    if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }

  /** The rails a sandbox simulator plays (production refuses each, naming its variable). */
  private simulatedRails(): { name: string; variable: string }[] {
    const bound = (token: symbol): object => this.moduleRef.get(token, { strict: false });
    const payout = bound(PAYOUT_RAIL);
    return [
      {
        name: 'mobile-money rail',
        variable: `RAIL_MOBILE_MONEY=${this.rails.mobileMoney}`,
        simulator: isExactly(bound(MOBILE_MONEY_RAIL), SandboxMobileMoneyRail),
      },
      {
        name: 'bank rail',
        variable: `RAIL_BANK=${this.rails.bank}`,
        simulator: payout instanceof RoutedPayoutRail ? isExactly(payout.bank, SandboxPayoutRail) : isExactly(payout, SandboxPayoutRail),
      },
      {
        name: 'airtime rail',
        variable: `RAIL_AIRTIME=${this.rails.airtime}`,
        simulator: isExactly(bound(AIRTIME_RAIL), SandboxAirtimeRail),
      },
      { name: 'FX rate source', variable: `FX_SOURCE=${this.rails.fx}`, simulator: this.rails.fx === 'sandbox' },
    ].filter((rail) => rail.simulator);
  }
}

/** The simulator itself, not a subclass (tests bind subclasses as stand-ins for real adapters). */
function isExactly(instance: object, type: abstract new (...args: never[]) => object): boolean {
  return Object.getPrototypeOf(instance)?.constructor === type;
}
