import Decimal from 'decimal.js';
import { CallbackSettingsService } from '../../../src/clients/callback-settings.service';
import { CallbackResolver } from '../../../src/common/url-safety/pinned-post';
import { createHttpApp } from '../../../src/http-app';
import { AirtimeMerchant, airtimeBody, airtimeMoney, createAirtimeMerchant, sendAirtime, sum } from '../../support/airtime-fixtures';
import { AfricasTalkingRecipientPlan } from '../../support/africastalking-stub';
import { AfricasTalkingSandbox, airtimeRecipients, startAfricasTalkingSandbox } from '../../support/africastalking-fixtures';
import { DarajaStub, STUB_CREDENTIALS } from '../../support/daraja-stub';
import { waitFor } from '../../support/gateway-fixtures';
import { JengaStub } from '../../support/jenga-stub';
import { ledgerViolations } from '../../support/money-fixtures';
import { OpenExchangeRatesStub } from '../../support/openexchangerates-stub';
import { PRODUCTION_ENV } from '../../support/production-app';
import { dataSource } from '../../support/test-app';

const RATES = `{"timestamp":{{timestamp}},"base":"USD","rates":{"EUR":0.92,"GBP":0.79,"KES":129.45,"TZS":2650.5,"UGX":3712.25,"USD":1}}`;
const FEE = new Decimal(10);
const MERCHANT_AIRTIME_URL = 'https://merchant.example.com/airtime';

/** Recipient i: every tenth fails at its final status, every seventh's callback is lost, every fifth is called back twice. */
function recipient(i: number): { phone_number: string; amount: string; plan: AfricasTalkingRecipientPlan; expected: 602 | 603 } {
  const fails = i % 10 === 3;
  return {
    phone_number: `2547${String(30_000_000 + i)}`,
    amount: new Decimal(5).plus(new Decimal(i % 50).dividedBy(100)).toFixed(2),
    plan: { final: fails ? 'Failed' : 'Success', callback: i % 7 === 0 ? 'never' : i % 5 === 0 ? 'twice' : 'once' },
    expected: fails ? 603 : 602,
  };
}

/**
 * Issue 19, done when: a production-mode server whose four rails are all real, against the stubs (Daraja, Jenga,
 * Africa's Talking, Open Exchange Rates), takes a 1,000-recipient airtime request end to end: every recipient final,
 * each hold resolved once, one merchant callback each, to the merchant's airtime endpoint.
 */
describe("production airtime on Africa's Talking: 1,000 recipients end to end", () => {
  let sandbox: AfricasTalkingSandbox;
  let merchant: AirtimeMerchant;
  const recipients = Array.from({ length: 1000 }, (_, i) => recipient(i));

  beforeAll(async () => {
    const daraja = await new DarajaStub().start();
    const jenga = await new JengaStub().start();
    const oxr = await new OpenExchangeRatesStub(RATES).start();
    sandbox = await startAfricasTalkingSandbox(
      {
        APP_ENV: 'production',
        JWT_SECRET: PRODUCTION_ENV.JWT_SECRET,
        DOCS_ENABLED: '',
        METRICS_TOKEN: '',
        PUBLIC_BASE_URL: 'https://pay.example.com',
        RAIL_MOBILE_MONEY: 'mpesa',
        ...STUB_CREDENTIALS,
        MPESA_BASE_URL: daraja.baseUrl,
        ...jenga.env(),
        FX_SOURCE: 'openexchangerates',
        OPENEXCHANGERATES_BASE_URL: oxr.baseUrl,
        OPENEXCHANGERATES_APP_ID: 'oxr-app-id',
        AFRICASTALKING_TIMEOUT_MS: '5000',
        RAIL_RECONCILE_AFTER_MS: '2000',
      },
      (role) => createHttpApp(role),
      [daraja, jenga, oxr],
    );
    sandbox.stub.plan = (number) => recipients.find((r) => `+${r.phone_number}` === number)!.plan;
    // Production calls merchants back over HTTPS to public addresses only: the endpoint is one, and the test reads
    // the callbacks scheduled to it (the deliverer refuses a local receiver here by design).
    merchant = await createAirtimeMerchant(sandbox.app, null);
    await sandbox.app
      .get(CallbackSettingsService)
      .setEndpoint(merchant.clientId, 'airtime', { url: MERCHANT_AIRTIME_URL, username: null, password: null });
    // Its deliveries then fail at once on a host that does not resolve, instead of reaching out (or waiting on DNS)
    // past the test: a delivery under way holds its worker, and so the server's close, until its time-out.
    sandbox.app.get(CallbackResolver).lookup = async () => [];
  });
  afterAll(async () => {
    if (sandbox) expect(await ledgerViolations(sandbox.app)).toEqual([]);
    await sandbox?.close();
  });

  it('tops up every recipient once, settles or refunds each once, and calls the merchant back for each', async () => {
    const { app, stub } = sandbox;
    const before = await airtimeMoney(app, merchant);
    const body = airtimeBody(
      recipients.map(({ phone_number, amount }) => ({ phone_number, amount })),
      { service_code: merchant.serviceCode },
    );
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);

    const rows = await waitFor(
      'every recipient final',
      async () => {
        const all = await airtimeRecipients(app, body.reference);
        return all.every((r) => [602, 603].includes(r.service_status)) ? all : undefined;
      },
      240_000,
      500,
    );
    expect(rows.map((r) => r.service_status)).toEqual(recipients.map((r) => r.expected));
    expect(rows.every((r) => r.outcome_entries === 1)).toBe(true);
    // Sent in calls of the batch size, each number once; the lost callbacks were asked about instead.
    expect(stub.sends.every((call) => call.recipients.length <= 25)).toBe(true);
    expect(recipients.filter((r) => stub.sentTo(r.phone_number) !== 1)).toEqual([]);
    const lost = recipients.filter((r) => r.plan.callback === 'never').map((r) => stub.topUpOf(`+${r.phone_number}`)!.requestId);
    expect(lost.filter((requestId) => !stub.finds.includes(requestId))).toEqual([]);

    const settled = sum(recipients.filter((r) => r.expected === 602).map((r) => new Decimal(r.amount).plus(FEE)));
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus(settled).toFixed(4));
    expect(after.inFlight).toBe(before.inFlight);

    const callbacks: Array<{ url: string; phone: string; status: number }> = await dataSource(app).query(
      `SELECT url, payload->>'phone_number' AS phone, (payload->>'service_status')::int AS status
       FROM callback_deliveries WHERE client_id = $1 AND reference = $2`,
      [merchant.clientId, body.reference],
    );
    expect(callbacks.every((c) => c.url === MERCHANT_AIRTIME_URL)).toBe(true);
    expect(callbacks.map((c) => `${c.phone}:${c.status}`).sort()).toEqual(recipients.map((r) => `${r.phone_number}:${r.expected}`).sort());
  }, 300_000);
});
