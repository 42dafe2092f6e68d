import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import {
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  airtimeStatus,
  createAirtimeMerchant,
  expectAuthenticAirtimeCallback,
  sendAirtime,
  waitForProcessed,
} from '../support/airtime-fixtures';
import { cliJson, runCli } from '../support/disbursement-fixtures';
import { IsolatedSandbox, MerchantReceiver, sleep, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { dataSource } from '../support/test-app';

const JAMMED = '254700000003';
const SENT = '254712345678';
const FEE = 10; // the merchant's FIXED airtime fee

/**
 * The operator resolves an airtime recipient the provider leaves jammed (issue 19, item 2: `airtime:resolve --client C
 * --reference R --phone P --status SUCCESSFUL|FAILED`): booked as the provider's answer would be (one entry settling
 * or releasing the hold, the merchant's airtime callback), and refused for a recipient that already has its result.
 */
describe('admin airtime:resolve', () => {
  // Each CLI run boots the application (seconds each on a loaded machine).
  jest.setTimeout(240_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: AirtimeMerchant;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100' });
    ({ app, receiver } = sandbox);
    merchant = await createAirtimeMerchant(app, receiver);
  }, 120_000);
  afterAll(async () => {
    if (app) expect(await ledgerViolations(app)).toEqual([]);
    await sandbox?.close();
  });

  const resolve = (reference: string, phone: string, status: string) =>
    runCli(
      sandbox.db.url,
      'airtime:resolve',
      '--client',
      merchant.clientCode,
      '--reference',
      reference,
      '--phone',
      phone,
      '--status',
      status,
      '--json',
    );
  const callbacksFor = (reference: string) =>
    receiver.at(merchant.airtimeUrl!).filter((c) => (c.body as { external_reference: string }).external_reference === reference);
  const statusOf = async (reference: string, phone: string) =>
    (await airtimeStatus(app, merchant, reference).expect(200)).body.find((r: { phone_number: string }) => r.phone_number === phone);
  const entries = async () =>
    (await dataSource(app).query(`SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1`, [merchant.clientId]))[0].n;

  /** A request with a jammed recipient of `amount` and one the provider tops up, waited until both have an answer. */
  async function jammedRequest(amount: string) {
    const body = airtimeBody(
      [
        { phone_number: JAMMED, amount },
        { phone_number: SENT, amount: '20' },
      ],
      { service_code: merchant.serviceCode },
    );
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    const results = await waitForProcessed(app, merchant, body.reference);
    expect(results.map((r) => r.service_status)).toEqual([604, 602]);
    await waitFor('the sent recipient’s callback', () => callbacksFor(body.reference).length === 1);
    return body.reference;
  }

  it('SUCCESSFUL settles the jammed hold: float unchanged, in-flight down by amount + fee, fee earned, callback 602', async () => {
    const reference = await jammedRequest('55.5');
    const before = await airtimeMoney(app, merchant);

    const out = cliJson(await resolve(reference, JAMMED, 'SUCCESSFUL'));
    expect(out).toMatchObject({
      client_code: merchant.clientCode,
      phone_number: JAMMED,
      service_status: 602,
      external_reference: reference,
    });

    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(before.float);
    expect(after.inFlight).toBe(new Decimal(before.inFlight).minus('55.5').minus(FEE).toFixed(4));
    expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus(FEE).toFixed(4));
    expect(await statusOf(reference, JAMMED)).toMatchObject({ service_status: 602, provider_reference: out.provider_reference });

    const [callback] = await waitFor('the resolved recipient’s callback', () => {
      const got = callbacksFor(reference).filter((c) => (c.body as { phone_number: string }).phone_number === JAMMED);
      return got.length ? got : undefined;
    });
    expectAuthenticAirtimeCallback(callback, merchant);
    expect(callback.body).toMatchObject({ phone_number: JAMMED, amount: 55.5, service_status: 602, external_reference: reference });
  });

  it('FAILED returns amount and fee to the float, with callback 603; resolving it again is refused and changes nothing', async () => {
    const reference = await jammedRequest('40');
    const before = await airtimeMoney(app, merchant);

    const out = cliJson(await resolve(reference, JAMMED, 'FAILED'));
    expect(out).toMatchObject({ phone_number: JAMMED, service_status: 603, message: expect.stringMatching(/resolved by operator/) });

    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).plus('40').plus(FEE).toFixed(4));
    expect(after.inFlight).toBe(new Decimal(before.inFlight).minus('40').minus(FEE).toFixed(4));
    expect(after.feeIncome).toBe(before.feeIncome);
    const callback = await waitFor('the failed recipient’s callback', () =>
      callbacksFor(reference).find((c) => (c.body as { phone_number: string }).phone_number === JAMMED),
    );
    expect(callback.body).toMatchObject({ service_status: 603, external_reference: reference });

    const settled = { money: after, entries: await entries() };
    for (const [phone, status] of [
      [JAMMED, 'SUCCESSFUL'],
      [SENT, 'FAILED'],
    ]) {
      const refused = await resolve(reference, phone, status);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout.trim()).toBe('');
      expect(refused.stderr.trim()).toMatch(/^error: airtime recipient \d+ of \S+ is not processing or jammed \(service_status 60[23]\)/);
    }
    await sleep(500);
    expect({ money: await airtimeMoney(app, merchant), entries: await entries() }).toEqual(settled);
    expect(callbacksFor(reference)).toHaveLength(2);
    expect(await statusOf(reference, JAMMED)).toMatchObject({ service_status: 603 });
  });

  it('refuses an unknown request, a number not in it and a status other than SUCCESSFUL or FAILED', async () => {
    const reference = await jammedRequest('12');
    const before = { money: await airtimeMoney(app, merchant), entries: await entries() };
    for (const [ref, phone, status, message] of [
      ['no-such-request', JAMMED, 'FAILED', /airtime request no-such-request not found/],
      [reference, '254799999999', 'FAILED', /has no recipient 254799999999/],
      [reference, JAMMED, 'REVERSED', /--status must be SUCCESSFUL or FAILED/],
    ] as const) {
      const refused = await resolve(ref, phone, status);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(message);
    }
    expect({ money: await airtimeMoney(app, merchant), entries: await entries() }).toEqual(before);
    expect(await statusOf(reference, JAMMED)).toMatchObject({ service_status: 604 });
  });
});
