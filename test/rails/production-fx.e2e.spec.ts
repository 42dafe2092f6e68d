import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../../src/http-app';
import { AfricasTalkingStub } from '../support/africastalking-stub';
import { STUB_CREDENTIALS } from '../support/daraja-stub';
import { withEnv } from '../support/gateway-fixtures';
import { JengaStub } from '../support/jenga-stub';
import { PRODUCTION_ENV } from '../support/production-app';

/** Production with M-Pesa and Jenga complete and these FX (and other) variables, the FX ones otherwise unset. */
async function startWith<T>(env: Record<string, string>, use: (app: NestFastifyApplication) => Promise<T>): Promise<T> {
  const restore = withEnv({
    APP_ENV: 'production',
    JWT_SECRET: PRODUCTION_ENV.JWT_SECRET,
    PUBLIC_BASE_URL: 'https://pay.example.com',
    ...STUB_CREDENTIALS,
    ...new JengaStub().env(),
    JENGA_BASE_URL: '',
    FX_SOURCE: '',
    OPENEXCHANGERATES_APP_ID: '',
    FX_SPREAD_BPS: '',
    ...env,
  });
  try {
    const app = await createHttpApp('api');
    try {
      return await use(app);
    } finally {
      await app.close();
    }
  } finally {
    restore();
  }
}

/** The api's start-up error with these variables ('' when it starts). */
async function startupError(env: Record<string, string>): Promise<string> {
  return startWith(env, async () => '').catch((error: Error) => error.message);
}

/**
 * Provider contract §11: FX_SOURCE defaults to openexchangerates in production, which needs its app id; the
 * sandbox's fixed quotes refuse production like any simulated rail (docs/decisions.md, "Production start-up").
 */
describe('FX source in production', () => {
  it('refuses to start without OPENEXCHANGERATES_APP_ID, naming it', async () => {
    expect(await startupError({})).toMatch(/FX_SOURCE=openexchangerates needs OPENEXCHANGERATES_APP_ID/);
    expect(await startupError({ FX_SOURCE: 'openexchangerates', FX_SPREAD_BPS: '0.5' })).toMatch(
      /OPENEXCHANGERATES_APP_ID.*FX_SPREAD_BPS must be a whole number of basis points/,
    );
  });

  it("names no FX problem once the app id is there (what still refuses the start is the airtime rail's variables)", async () => {
    const message = await startupError({ OPENEXCHANGERATES_APP_ID: 'oxr-app-id' });
    expect(message).not.toMatch(/OPENEXCHANGERATES|FX_/);
    expect(message).toMatch(/RAIL_AIRTIME=africastalking needs AFRICASTALKING_USERNAME, AFRICASTALKING_API_KEY/);
  });

  it('refuses FX_SOURCE=sandbox, naming it as a simulated rail, in the same message as the missing variables', async () => {
    expect(await startupError({ FX_SOURCE: 'sandbox' })).toBe(
      'Invalid configuration: RAIL_AIRTIME=africastalking needs AFRICASTALKING_USERNAME, AFRICASTALKING_API_KEY; ' +
        'no production adapter for the FX rate source (FX_SOURCE=sandbox): only the sandbox simulator would play it, ' +
        'so APP_ENV=production cannot start',
    );
    expect(await startupError({ FX_SOURCE: 'sandbox', ...AfricasTalkingStub.CREDENTIALS })).toMatch(
      /^Invalid configuration: no production adapter for the FX rate source \(FX_SOURCE=sandbox\)/,
    );
  });

  it('names an FX_SOURCE that is none of its values', async () => {
    expect(await startupError({ FX_SOURCE: 'ecb', ...AfricasTalkingStub.CREDENTIALS })).toBe(
      'Invalid configuration: FX_SOURCE must be openexchangerates or sandbox',
    );
  });
});
