import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { rootModule } from '../../src/app.module';
import { configureHttpApp, createHttpAdapter } from '../../src/http-app';
import { FX_RATE_SOURCE, SandboxFxRateSource } from '../../src/fx/fx-rate-source';
import { loadConfig } from '../../src/infra/config/app-config';
import { AIRTIME_RAIL } from '../../src/rails/airtime.rail';
import { MOBILE_MONEY_RAIL } from '../../src/rails/mobile-money.rail';
import { PAYOUT_RAIL } from '../../src/rails/payout.rail';
import { SandboxAirtimeRail } from '../../src/rails/sandbox-airtime.rail';
import { SandboxMobileMoneyRail } from '../../src/rails/sandbox-mobile-money.rail';
import { SandboxPayoutRail } from '../../src/rails/sandbox-payout.rail';
import { withEnv } from './gateway-fixtures';

/**
 * Stand in for real operators' adapters in production-mode tests: they behave like the simulators, but they are not
 * the simulator classes, which production refuses to start with. Only tests bind them, through provider overrides.
 */
export class TestOperatorRail extends SandboxMobileMoneyRail {}
export class TestPayoutRail extends SandboxPayoutRail {}
export class TestAirtimeRail extends SandboxAirtimeRail {}
export class TestFxRateSource extends SandboxFxRateSource {}

export const PRODUCTION_ENV = {
  APP_ENV: 'production',
  // The simulators are bound (no operator variables needed) and then replaced by the stand-ins below.
  RAIL_MOBILE_MONEY: 'sandbox',
  RAIL_BANK: 'sandbox',
  RAIL_AIRTIME: 'sandbox',
  // Open Exchange Rates is configured (FX_SOURCE=sandbox refuses production); its source is replaced below.
  FX_SOURCE: 'openexchangerates',
  OPENEXCHANGERATES_APP_ID: 'production-test-app-id',
  JWT_SECRET: 'production-test-secret-0123456789abcdef',
  DOCS_ENABLED: '',
  METRICS_TOKEN: '',
};

/** The HTTP application with APP_ENV=production (and any other env given), its rails played by the test adapters above. */
export async function createProductionApp(
  env: Record<string, string> = {},
  role: 'api' | 'sandbox' = 'api',
): Promise<NestFastifyApplication> {
  const restore = withEnv({ ...PRODUCTION_ENV, ...env });
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [rootModule(role)],
    })
      .overrideProvider(MOBILE_MONEY_RAIL)
      .useClass(TestOperatorRail)
      .overrideProvider(PAYOUT_RAIL)
      .useClass(TestPayoutRail)
      .overrideProvider(AIRTIME_RAIL)
      .useClass(TestAirtimeRail)
      .overrideProvider(FX_RATE_SOURCE)
      .useClass(TestFxRateSource)
      .compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(loadConfig()), { bufferLogs: true });
    return await configureHttpApp(app);
  } finally {
    restore();
  }
}
