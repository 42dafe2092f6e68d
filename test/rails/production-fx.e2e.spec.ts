import { createHttpApp } from '../../src/http-app';
import { STUB_CREDENTIALS } from '../support/daraja-stub';
import { withEnv } from '../support/gateway-fixtures';
import { JengaStub } from '../support/jenga-stub';
import { PRODUCTION_ENV } from '../support/production-app';

/** The api's start-up error in production with M-Pesa and Jenga complete and these FX variables (the others unset). */
async function startupError(fx: Record<string, string>): Promise<string> {
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
    ...fx,
  });
  try {
    const app = await createHttpApp('api');
    await app.close();
    return '';
  } catch (error) {
    return (error as Error).message;
  } finally {
    restore();
  }
}

/** Provider contract §11: FX_SOURCE defaults to openexchangerates in production, which needs its app id. */
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
});
