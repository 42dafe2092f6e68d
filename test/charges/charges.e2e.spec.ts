import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { verifySignature } from '../support/callback-signature';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  finishedCallbackLog,
  gateway,
  GatewayMerchant,
  ledgerBalance,
  IsolatedSandbox,
  MerchantReceiver,
  paymentRow,
  ReceivedCallback,
  settlementJobDone,
  sleep,
  startIsolatedSandbox,
  stopClaiming,
  systemBalance,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';

/** ISO 8601 with a UTC designator (Z or +00:00). */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;
const SETTLE_DELAY_MS = 500;

/**
 * Direct mobile-money charges end to end in the sandbox (collection document §2–§4, §6; provider contract §5–§7,
 * §10 "Charges"): one test per row of the sandbox rails table, the status query, and the callbacks a merchant
 * receives. The app runs as `sandbox` (api + relay + workers in one process) on a database and redis-server of its own.
 */
describe('mobile-money charges end to end (sandbox rails)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let clientUrl: string;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS), CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    clientUrl = receiver.url(`/client-configured/${randomUUID()}`);
    merchant = await createGatewayMerchant(app, { clientCallbackUrl: clientUrl });
  });
  afterAll(async () => sandbox?.close());

  const gw = () => gateway(app, merchant.token);

  async function charge(overrides: Record<string, unknown> = {}) {
    const body = chargeBody(merchant, { callback_url: receiver.url(), ...overrides });
    const res = await gw().post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    return {
      body,
      res,
      id: res.body.charge_request_id as number,
      reference: body.external_reference as string,
      url: body.callback_url as string,
    };
  }

  async function money() {
    return {
      settlement: await ledgerBalance(app, merchant.settlementAccountNumber),
      feeIncome: await systemBalance(app, merchant.clientId, 'FEE_INCOME'),
    };
  }

  function plus(a: string, b: Decimal.Value) {
    return new Decimal(a).plus(b).toFixed(4);
  }

  async function receivedAt(url: string, count = 1): Promise<ReceivedCallback[]> {
    return waitFor(`${count} callback(s) at ${url}`, () => (receiver.at(url).length >= count ? receiver.at(url) : undefined));
  }

  /** The checks every callback must pass: POST, JSON, Basic auth from the callback settings, a valid signature. */
  function expectAuthenticCallback(callback: ReceivedCallback) {
    expect(callback.method).toBe('POST');
    expect(callback.headers['content-type']).toMatch(/^application\/json/);
    const basic = Buffer.from(`${merchant.callbackUsername}:${merchant.callbackPassword}`).toString('base64');
    expect(callback.headers.authorization).toBe(`Basic ${basic}`);
    const signature = callback.headers['x-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(merchant.signingSecret, callback.rawBody, signature)).toBe(true);
    // The signature covers the body: any change breaks it, and another secret does not verify it.
    expect(verifySignature(merchant.signingSecret, callback.rawBody.replace('"amount"', '"amounT"'), signature)).toBe(false);
    expect(verifySignature('whsec_not-the-secret', callback.rawBody, signature)).toBe(false);
    expect(callback.headers['x-event-id']).toMatch(/^[0-9a-f-]{36}$/);
  }

  describe('a normal number succeeds (700)', () => {
    it('answers 176 at once, stays pending, then settles: callback, status query and money agree', async () => {
      const before = await money();
      // The worker stops claiming, so the payment is read before its settlement can run.
      const startClaiming = await stopClaiming(app);
      const { res, id, reference, url, body } = await charge({ amount: 100 });
      expect(res.body).toEqual({
        status_code: 176,
        status_description: expect.any(String),
        total_amount: '100.0000',
        service_amount: '100.0000',
        transaction_charge: '0.0000',
        charge_request_id: expect.any(Number),
        external_reference: reference,
        payment_url: null,
        next_step: null,
      });
      // Asynchronous: right after acceptance the payment is still pending and no money has moved.
      const early = await gw().get(`/v1/transaction/${id}/status`).expect(200);
      expect(early.body.payment_status).toBe('703');
      expect(await money()).toEqual(before);
      startClaiming();

      const [callback] = await receivedAt(url);
      expectAuthenticCallback(callback);
      expect(callback.body).toEqual({
        event: 'successful_payment',
        amount: '100.0000',
        extra_data: body.extra_data,
        client_code: merchant.clientCode,
        country_code: 'KEN',
        payer_msisdn: body.payer_msisdn,
        payment_date: expect.stringMatching(ISO),
        service_code: merchant.serviceCode,
        currency_code: 'KES',
        account_number: 'INV-ACC-1',
        payment_status: '700',
        transaction_id: String(id),
        payment_id: String(id),
        payer_narration: expect.any(String),
        charge_request_id: String(id),
        external_reference: reference,
        receiver_narration: expect.any(String),
        payment_method_code: 'MMONEY_KEN',
        payer_transaction_id: expect.stringMatching(/\S/),
      });

      // The status query answers the callback's shape with the same facts.
      const status = await gw().get(`/v1/transaction/${id}/status`).expect(200);
      expect(status.body).toEqual(callback.body);

      // The merchant bears the FIXED fee of 10: the settlement wallet gets 90, fee income 10, in one entry.
      expect(await money()).toEqual({ settlement: plus(before.settlement, 90), feeIncome: plus(before.feeIncome, 10) });
      const row = await paymentRow(app, merchant.clientId, reference);
      expect(row!.entry_id).not.toBeNull();

      // Sent to the charge's callback_url only (notify flags off): exactly one delivery, delivered by one request.
      const log = await finishedCallbackLog(app, merchant, reference);
      expect(receiver.forReference(reference)).toHaveLength(1);
      expect(log.deliveries[0]).toMatchObject({
        event_id: callback.headers['x-event-id'],
        event: 'successful_payment',
        url,
        status: 'DELIVERED',
        attempts: 1,
        acknowledgement: {
          charge_request_id: String(id),
          acknowledgement_code: '900',
          acknowledgement_description: `received ${reference}`,
          payment_id: String(id),
        },
      });
      expect(log.deliveries[0].attempt_log).toEqual([
        {
          attempt: 1,
          attempted_at: expect.stringMatching(ISO),
          http_status: 200,
          latency_ms: expect.any(Number),
          error: null,
          replay: false,
        },
      ]);
    });

    it('add_transaction_charge true: the payer pays amount + charge, the merchant receives the full amount', async () => {
      const before = await money();
      const { res, id, url } = await charge({ amount: '250.50', add_transaction_charge: true, transaction_charge: '7.25' });
      expect(res.body).toMatchObject({ total_amount: '257.7500', service_amount: '250.5000', transaction_charge: '7.2500' });
      const [callback] = await receivedAt(url);
      expect(callback.body).toMatchObject({
        event: 'successful_payment',
        payment_status: '700',
        amount: '250.5000',
        payment_id: String(id),
      });
      expect(await money()).toEqual({ settlement: plus(before.settlement, '250.5'), feeIncome: plus(before.feeIncome, '7.25') });
    });

    it('add_transaction_charge false: the payer pays the amount only and the merchant bears the service fee', async () => {
      const before = await money();
      const { res, url } = await charge({ amount: 40, add_transaction_charge: false, transaction_charge: '7.25' });
      expect(res.body).toMatchObject({ total_amount: '40.0000', service_amount: '40.0000' });
      await receivedAt(url);
      expect(await money()).toEqual({ settlement: plus(before.settlement, 30), feeIncome: plus(before.feeIncome, 10) });
    });
  });

  it('254700000001 fails (701): failed_payment callback, no money moves', async () => {
    const before = await money();
    const { id, url, reference } = await charge({ payer_msisdn: '254700000001' });
    const [callback] = await receivedAt(url);
    expectAuthenticCallback(callback);
    expect(callback.body).toMatchObject({
      event: 'failed_payment',
      payment_status: '701',
      payment_id: String(id),
      external_reference: reference,
    });
    const status = await gw().get(`/v1/transaction/${id}/status`).expect(200);
    expect(status.body).toEqual(callback.body);
    expect(await money()).toEqual(before);
    expect((await paymentRow(app, merchant.clientId, reference))!.entry_id).toBeNull();
  });

  it('254700000002 stays pending (703): the operator never answers, no callback, no money', async () => {
    const before = await money();
    const { id, url, reference } = await charge({ payer_msisdn: '254700000002' });
    // The settlement job ran (the operator was asked) and left the payment pending.
    await waitFor('the settlement job to run', () => settlementJobDone(app, id));
    const status = await gw().get(`/v1/transaction/${id}/status`).expect(200);
    expect(status.body).toMatchObject({ payment_status: '703', payment_id: String(id) });
    expect(receiver.at(url)).toHaveLength(0);
    expect((await callbackLog(app, merchant, reference)).deliveries).toEqual([]);
    expect(await money()).toEqual(before);
  });

  it('254700000003 is jammed (704): readable by status query, no money, no success callback', async () => {
    const before = await money();
    const { id, url, reference } = await charge({ payer_msisdn: '254700000003' });
    const status = await waitForPaymentStatus(app, merchant, id, 704);
    expect(status).toMatchObject({ payment_id: String(id), external_reference: reference });
    // The settlement that wrote 704 wrote its callbacks with it: none of them is a success.
    expect((await callbackLog(app, merchant, reference)).deliveries.filter((d) => d.event === 'successful_payment')).toEqual([]);
    expect(receiver.at(url).filter((c) => c.body.event === 'successful_payment')).toHaveLength(0);
    expect(await money()).toEqual(before);
    expect((await paymentRow(app, merchant.clientId, reference))!.entry_id).toBeNull();
  });

  describe('254700000004 needs an OTP (VERIFY_OTP)', () => {
    const verify = (body: unknown) =>
      gw()
        .post('/v1/mobile-money/verify-otp')
        .send(body as object);

    it('answers next_step VERIFY_OTP and does not settle until the OTP is proven', async () => {
      const { res, id, url } = await charge({ payer_msisdn: '254700000004' });
      expect(res.body).toMatchObject({ status_code: 176, next_step: 'VERIFY_OTP', payment_url: null, charge_request_id: id });
      await sleep(SETTLE_DELAY_MS + 300);
      expect((await gw().get(`/v1/transaction/${id}/status`).expect(200)).body.payment_status).toBe('703');
      expect(receiver.at(url)).toHaveLength(0);
    });

    it('three wrong OTPs give OTP_INVALID with 3, 2, 1 attempts remaining; the fourth gives FAILED and the payment fails (701)', async () => {
      const before = await money();
      const { id, url, reference } = await charge({ payer_msisdn: '254700000004' });
      for (const remaining of [3, 2, 1]) {
        const res = await verify({ reference, otp: '111111' });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          reference,
          status: 'OTP_INVALID',
          description: expect.stringMatching(new RegExp(`\\b${remaining}\\b.*attempt`, 'i')),
        });
      }
      const fourth = await verify({ reference, otp: '222222' });
      expect(fourth.status).toBe(200);
      expect(fourth.body).toMatchObject({ reference, status: 'FAILED', description: expect.any(String) });

      const [callback] = await receivedAt(url);
      expectAuthenticCallback(callback);
      expect(callback.body).toMatchObject({ event: 'failed_payment', payment_status: '701', payment_id: String(id) });
      const failed = await gw().get(`/v1/transaction/${id}/status`).expect(200);
      expect(failed.body).toEqual(callback.body);
      // Too late for the right OTP: the payment stays failed and no money moves.
      const late = await verify({ reference, otp: '123456' });
      expect(late.body.status).toBe('FAILED');
      await sleep(SETTLE_DELAY_MS + 200);
      expect((await gw().get(`/v1/transaction/${id}/status`).expect(200)).body.payment_status).toBe('701');
      expect(await money()).toEqual(before);
    });

    it('123456 gives SUCCESSFUL (after a wrong one), then the payment settles (700) with its callback and money', async () => {
      const before = await money();
      const { id, url, reference } = await charge({ payer_msisdn: '254700000004', amount: 60 });
      expect((await verify({ reference, otp: '999999' })).body).toMatchObject({ status: 'OTP_INVALID' });
      const ok = await verify({ reference, otp: '123456' });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ reference, status: 'SUCCESSFUL', description: expect.any(String) });
      const [callback] = await receivedAt(url);
      expectAuthenticCallback(callback);
      expect(callback.body).toMatchObject({ event: 'successful_payment', payment_status: '700', payment_id: String(id) });
      expect(await money()).toEqual({ settlement: plus(before.settlement, 50), feeIncome: plus(before.feeIncome, 10) });
      // Proving the OTP again neither fails the payment nor settles it twice.
      expect((await verify({ reference, otp: '123456' })).body.status).toBe('SUCCESSFUL');
      await sleep(SETTLE_DELAY_MS + 200);
      expect(receiver.at(url)).toHaveLength(1);
      expect(await money()).toEqual({ settlement: plus(before.settlement, 50), feeIncome: plus(before.feeIncome, 10) });
    });

    it.each<[string, unknown]>([
      ['an empty body', {}],
      ['no otp', { reference: 'ext-x' }],
      ['no reference', { otp: '123456' }],
      ['an empty reference', { reference: '', otp: '123456' }],
      ['an empty otp', { reference: 'ext-x', otp: '' }],
      ['a numeric otp', { reference: 'ext-x', otp: 123456 }],
      ['a null reference', { reference: null, otp: '123456' }],
    ])('%s → 400 with status_code 172 saying both are required', async (_name, body) => {
      const res = await verify(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status_code: 172,
        status_description: expect.stringMatching(/required/i),
        message: expect.any(String),
      });
    });

    it('an unknown reference → 404 with status_code 120', async () => {
      const res = await verify({ reference: `nope-${randomUUID()}`, otp: '123456' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status_code: 120, status_description: 'Transaction not found' });
    });

    it('an OTP for a charge that does not take one is refused (4xx) and changes nothing', async () => {
      const { reference, url } = await charge();
      const res = await verify({ reference, otp: '123456' });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body).toMatchObject({ status_code: expect.any(Number), status_description: expect.any(String) });
      const [callback] = await receivedAt(url);
      expect(callback.body.payment_status).toBe('700');
    });
  });

  it('254700000005 answers AUTHORIZE_TRANSACTION with a payment_url, and settles (700) by itself', async () => {
    const before = await money();
    const { res, id, url } = await charge({ payer_msisdn: '254700000005', amount: 75 });
    expect(res.body).toMatchObject({
      status_code: 176,
      next_step: 'AUTHORIZE_TRANSACTION',
      payment_url: expect.stringMatching(/^https?:\/\/\S+$/),
    });
    const page = await request(app.getHttpServer()).get(new URL(res.body.payment_url).pathname);
    expect(page.status).toBe(200);
    const [callback] = await receivedAt(url);
    expectAuthenticCallback(callback);
    expect(callback.body).toMatchObject({ event: 'successful_payment', payment_status: '700', payment_id: String(id) });
    expect(await money()).toEqual({ settlement: plus(before.settlement, 65), feeIncome: plus(before.feeIncome, 10) });
  });

  describe('status query GET /v1/transaction/{id}/status', () => {
    it('an unknown id → 404 with status_code 120; so is a non-numeric id', async () => {
      for (const id of ['987654321987', 'abc', '-1', '1.5']) {
        const res = await gw().get(`/v1/transaction/${id}/status`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ status_code: 120, status_description: 'Transaction not found', message: expect.any(String) });
      }
    });

    it("another client's charge → 404, exactly as if it did not exist", async () => {
      const { id, reference, url } = await charge();
      await receivedAt(url);
      const other = await createGatewayMerchant(app);
      const foreign = await gateway(app, other.token).get(`/v1/transaction/${id}/status`);
      const unknown = await gateway(app, other.token).get(`/v1/transaction/987654321987/status`);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(unknown.body);
      // Nor can the other client read its callbacks or verify its OTP.
      expect((await callbackLog(app, other, reference)).deliveries).toEqual([]);
      const otp = await gateway(app, other.token).post('/v1/mobile-money/verify-otp').send({ reference, otp: '123456' });
      expect(otp.status).toBe(404);
    });
  });

  describe('notify_client / notify_originator', () => {
    it('notify_client also sends the result to the client’s configured URL, with the same payload and its own event id', async () => {
      const { url, reference, id } = await charge({ notify_client: true });
      const [own] = await receivedAt(url);
      const toClient = await waitFor('the callback at the configured URL', () => {
        const found = receiver.at(clientUrl).filter((c) => c.body.external_reference === reference);
        return found.length > 0 ? found : undefined;
      });
      expect(toClient).toHaveLength(1);
      expectAuthenticCallback(toClient[0]);
      expect(toClient[0].body).toEqual(own.body);
      expect(toClient[0].body.payment_id).toBe(String(id));
      expect(toClient[0].headers['x-event-id']).not.toBe(own.headers['x-event-id']);
      const log = await finishedCallbackLog(app, merchant, reference, 2);
      expect(log.deliveries.map((d) => d.url).sort()).toEqual([url, clientUrl].sort());
      expect(log.deliveries.every((d) => d.status === 'DELIVERED')).toBe(true);
    });

    it('notify_originator also sends it to the configured URL', async () => {
      const { url, reference } = await charge({ notify_originator: true });
      await receivedAt(url);
      await waitFor('the callback at the configured URL', () =>
        receiver.at(clientUrl).some((c) => c.body.external_reference === reference),
      );
    });

    it('when the configured URL is the charge’s own callback_url, the result is sent once', async () => {
      const { reference } = await charge({ notify_client: true, notify_originator: true, callback_url: clientUrl });
      // The settlement writes every delivery of the result; once they are final, the receiver has had them all.
      await finishedCallbackLog(app, merchant, reference);
      expect(receiver.forReference(reference)).toHaveLength(1);
    });

    it('a failure at the OTP limit is told as a settlement is: to the callback_url and, with notify_client, the configured URL', async () => {
      const { url, reference } = await charge({ payer_msisdn: '254700000004', notify_client: true });
      for (let attempt = 0; attempt < 4; attempt++) {
        await gw().post('/v1/mobile-money/verify-otp').send({ reference, otp: '111111' }).expect(200);
      }
      const [own] = await receivedAt(url);
      expect(own.body).toMatchObject({ event: 'failed_payment', payment_status: '701' });
      const toClient = await waitFor('the callback at the configured URL', () =>
        receiver.at(clientUrl).find((c) => c.body.external_reference === reference),
      );
      expect(toClient.body).toEqual(own.body);
    });

    it('without the flags nothing goes to the configured URL', async () => {
      const { url, reference } = await charge({ notify_client: false, notify_originator: false });
      await receivedAt(url);
      expect((await finishedCallbackLog(app, merchant, reference)).deliveries.map((d) => d.url)).toEqual([url]);
      expect(receiver.at(clientUrl).filter((c) => c.body.external_reference === reference)).toHaveLength(0);
    });
  });
});
