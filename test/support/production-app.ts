import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { rootModule } from '../../src/app.module';
import { configureHttpApp, createHttpAdapter } from '../../src/http-app';
import { loadConfig } from '../../src/infra/config/app-config';
import { MOBILE_MONEY_RAIL } from '../../src/rails/mobile-money.rail';
import { SandboxMobileMoneyRail } from '../../src/rails/sandbox-mobile-money.rail';
import { withEnv } from './gateway-fixtures';

/**
 * Stands in for a real operator's adapter in production-mode tests: it behaves like the simulator, but it is not
 * the simulator class, which production refuses to start with. Only tests bind it, through a provider override.
 */
export class TestOperatorRail extends SandboxMobileMoneyRail {}

export const PRODUCTION_ENV = { APP_ENV: 'production', JWT_SECRET: 'production-test-secret-0123456789abcdef', DOCS_ENABLED: '', METRICS_TOKEN: '' };

/** The HTTP application with APP_ENV=production (and any other env given), its rails played by TestOperatorRail. */
export async function createProductionApp(env: Record<string, string> = {}, role: 'api' | 'sandbox' = 'api'): Promise<NestFastifyApplication> {
  const restore = withEnv({ ...PRODUCTION_ENV, ...env });
  try {
    const moduleRef = await Test.createTestingModule({ imports: [rootModule(role)] })
      .overrideProvider(MOBILE_MONEY_RAIL)
      .useClass(TestOperatorRail)
      .compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(loadConfig()), { bufferLogs: true });
    return await configureHttpApp(app);
  } finally {
    restore();
  }
}
