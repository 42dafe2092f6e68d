import { createHttpApp } from '../../src/http-app';
import { STUB_CREDENTIALS } from '../support/daraja-stub';
import { withEnv } from '../support/gateway-fixtures';
import { AfricasTalkingStub } from '../support/africastalking-stub';
import { JengaStub } from '../support/jenga-stub';
import { createProductionApp, PRODUCTION_ENV } from '../support/production-app';

const PRODUCTION = {
  APP_ENV: 'production',
  JWT_SECRET: PRODUCTION_ENV.JWT_SECRET,
  PUBLIC_BASE_URL: 'https://pay.example.com',
  OPENEXCHANGERATES_APP_ID: 'oxr-app-id',
};
const RAIL_VARIABLES = [
  'RAIL_CIRCUIT_FAILURES',
  'RAIL_MOBILE_MONEY',
  'RAIL_BANK',
  'RAIL_AIRTIME',
  'FX_SOURCE',
  'JENGA_BASE_URL',
  'JENGA_PRIVATE_KEY_PATH',
  'AFRICASTALKING_BASE_URL',
  ...Object.keys(STUB_CREDENTIALS),
  ...Object.keys(JengaStub.CREDENTIALS),
  ...Object.keys(AfricasTalkingStub.CREDENTIALS),
];

/** Starts the api with exactly these variables for the rails (the others unset). */
async function startWith(env: Record<string, string>) {
  const cleared = withEnv(Object.fromEntries(RAIL_VARIABLES.map((name) => [name, ''])));
  const restore = withEnv({ ...PRODUCTION, ...env });
  try {
    const app = await createHttpApp('api');
    await app.close();
  } finally {
    restore();
    cleared();
  }
}

/** Provider contract §11: production starts only with real rails, each with all of its variables. */
describe('rails in production', () => {
  it('refuses to start when M-Pesa (production default) lacks variables, naming every missing one', async () => {
    const failure = startWith({});
    await expect(failure).rejects.toThrow(
      /RAIL_MOBILE_MONEY=mpesa needs MPESA_CONSUMER_KEY, MPESA_CONSUMER_SECRET, MPESA_SHORTCODE, MPESA_PASSKEY, MPESA_PAYOUT_SHORTCODE, MPESA_INITIATOR_NAME, MPESA_INITIATOR_PASSWORD, MPESA_CERTIFICATE_PATH/,
    );
    const { MPESA_PASSKEY: _passkey, ...allButPasskey } = STUB_CREDENTIALS;
    await expect(startWith(allButPasskey)).rejects.toThrow(/needs MPESA_PASSKEY$|needs MPESA_PASSKEY;|needs MPESA_PASSKEY\b/);
  });

  it('refuses to start with a sandbox rail, naming each', async () => {
    await expect(
      startWith({ ...STUB_CREDENTIALS, RAIL_MOBILE_MONEY: 'sandbox', RAIL_BANK: 'sandbox', RAIL_AIRTIME: 'sandbox' }),
    ).rejects.toThrow(
      /no production adapter for the mobile-money rail \(RAIL_MOBILE_MONEY=sandbox\), the bank rail \(RAIL_BANK=sandbox\), the airtime rail \(RAIL_AIRTIME=sandbox\)/,
    );
  });

  it('names every missing or malformed variable and every simulated rail in one start-up failure', async () => {
    await expect(
      startWith({ RAIL_BANK: 'sandbox', RAIL_AIRTIME: 'sandbox', FX_SOURCE: 'sandbox', RAIL_CIRCUIT_FAILURES: '0' }),
    ).rejects.toThrow(
      'Invalid configuration: RAIL_CIRCUIT_FAILURES must be a whole number from 1 to 999; ' +
        'RAIL_MOBILE_MONEY=mpesa needs MPESA_CONSUMER_KEY, MPESA_CONSUMER_SECRET, MPESA_SHORTCODE, MPESA_PASSKEY, ' +
        'MPESA_PAYOUT_SHORTCODE, MPESA_INITIATOR_NAME, MPESA_INITIATOR_PASSWORD, MPESA_CERTIFICATE_PATH; ' +
        'no production adapter for the bank rail (RAIL_BANK=sandbox), the airtime rail (RAIL_AIRTIME=sandbox), ' +
        'the FX rate source (FX_SOURCE=sandbox): only the sandbox simulator would play it, so APP_ENV=production cannot start',
    );
  });

  it("names every missing Jenga and Africa's Talking variable, and starts with all four rails configured", async () => {
    await expect(startWith({ ...STUB_CREDENTIALS, RAIL_BANK: 'jenga' })).rejects.toThrow(
      /RAIL_BANK=jenga needs JENGA_API_KEY, JENGA_MERCHANT_CODE, JENGA_CONSUMER_SECRET, JENGA_PRIVATE_KEY_PATH, JENGA_SOURCE_ACCOUNT_NUMBER, JENGA_SOURCE_ACCOUNT_NAME/,
    );
    const jenga = new JengaStub();
    await expect(startWith({ ...STUB_CREDENTIALS, ...jenga.env() })).rejects.toThrow(
      /RAIL_AIRTIME=africastalking needs AFRICASTALKING_USERNAME, AFRICASTALKING_API_KEY$/,
    );
    const { AFRICASTALKING_API_KEY: _key, ...withoutKey } = AfricasTalkingStub.CREDENTIALS;
    await expect(startWith({ ...STUB_CREDENTIALS, ...jenga.env(), ...withoutKey })).rejects.toThrow(
      /RAIL_AIRTIME=africastalking needs AFRICASTALKING_API_KEY$/,
    );
    await expect(startWith({ ...STUB_CREDENTIALS, ...jenga.env(), ...AfricasTalkingStub.CREDENTIALS })).resolves.toBeUndefined();
  });

  it('refuses an M-Pesa callback base that is not HTTPS in production', async () => {
    await expect(startWith({ ...STUB_CREDENTIALS, MPESA_CALLBACK_BASE_URL: 'http://pay.example.com' })).rejects.toThrow(
      /MPESA_CALLBACK_BASE_URL \(or PUBLIC_BASE_URL\) must be https/,
    );
  });

  it('starts when every rail has an operator adapter (here test stand-ins, through provider overrides)', async () => {
    const app = await createProductionApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/health/live' });
      expect(res.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
