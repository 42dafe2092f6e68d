import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { verifySignature } from '../support/callback-signature';
import { ClientServicesService } from '../../src/client-services/client-services.service';
import { checkoutBody, checkoutStatus, initiateCheckout, ISO_UTC, plus, waitForCheckout } from '../support/collections-fixtures';
import {
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  MerchantReceiver,
  ReceivedCallback,
  startIsolatedSandbox,
  stopClaiming,
  systemBalance,
  waitFor,
} from '../support/gateway-fixtures';
import { createWallet } from '../support/wallet-fixtures';
import { dataSource } from '../support/test-app';
import { TOPICS } from '../../src/infra/queue/queues';

const SETTLE_DELAY_MS = 400;
const MINUTE_MS = 1000;
const PUBLIC_BASE_URL = 'https://pay.sandbox.test';

/**
 * Hosted checkout through the gateway and the pay endpoint of the hosted page (collection document §2–§4, §6;
 * provider contract §5 "Checkout", §7 sandbox rails, §10 "Collections money"). The app runs as `sandbox` on a
 * database and redis-server of its own; one checkout "minute" lasts MINUTE_MS so expiry can be seen.
 */
describe('hosted checkout (gateway + pay endpoint)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS),
      SANDBOX_MINUTE_MS: String(MINUTE_MS),
      CALLBACK_RETRY_DELAYS_MS: '300,600,900',
      PUBLIC_BASE_URL,
    });
    ({ app, receiver } = sandbox);
    // The merchant's collections endpoint is on the receiver, so per-request callback URLs there (same origin)
    // carry its Basic credentials; they would not go to another origin.
    merchant = await createGatewayMerchant(app, { clientCallbackUrl: receiver.url(`/merchant-events/${randomUUID()}`) });
    other = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  const gw = (m: GatewayMerchant = merchant) => gateway(app, m.token);
  const pay = (reference: string, body: Record<string, unknown>) =>
    request(app.getHttpServer()).post(`/checkout/${reference}/pay`).send(body);

  async function callbacksAt(url: string, count: number): Promise<ReceivedCallback[]> {
    return waitFor(`${count} callback(s) at ${url}`, () => (receiver.at(url).length >= count ? receiver.at(url) : undefined));
  }

  function expectGatewayError(res: request.Response, httpStatus: number, statusCode?: number) {
    expect(res.status).toBe(httpStatus);
    expect(res.body).toEqual({
      status_code: statusCode ?? expect.any(Number),
      status_description: expect.any(String),
      message: expect.any(String),
    });
  }

  describe('initiation', () => {
    it('answers 200 with the documented fields: the reference, the amount echoed as an integer, expiry and our hosted page', async () => {
      const before = Date.now();
      const { body, res } = await initiateCheckout(app, merchant, receiver, { amount: 2750, expires_in: 30 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(
        ['amount', 'checkout_reference', 'currency', 'expires_at', 'merchant_transaction_id', 'redirect_url'].sort(),
      );
      expect(res.body.merchant_transaction_id).toBe(body.merchant_transaction_id);
      expect(res.body.amount).toBe(2750);
      expect(res.body.currency).toBe('KES');
      expect(res.body.checkout_reference).toEqual(expect.any(String));
      expect(res.body.expires_at).toMatch(ISO_UTC);
      const expiresAt = Date.parse(res.body.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * MINUTE_MS - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * MINUTE_MS + 1000);
      expect(res.body.redirect_url).toBe(`${PUBLIC_BASE_URL}/checkout/${res.body.checkout_reference}`);

      const status = await checkoutStatus(app, merchant, body.merchant_transaction_id);
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({
        amount: '2750',
        checkout_reference: res.body.checkout_reference,
        currency: 'KES',
        merchant_transaction_id: body.merchant_transaction_id,
        narration: body.narration,
        payments: [],
        status: 803,
      });
      expect(status.body.timestamp).toMatch(ISO_UTC);
    });

    it('is idempotent on merchant_transaction_id: the same body returns the same checkout, another body is a 409', async () => {
      const body = checkoutBody(merchant, receiver);
      const first = await gw().post('/v2/checkout/initiate').send(body);
      const again = await gw().post('/v2/checkout/initiate').send(body);
      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.body.checkout_reference).toBe(first.body.checkout_reference);
      expect(again.body).toEqual(first.body);

      const changed = await gw()
        .post('/v2/checkout/initiate')
        .send({ ...body, amount: body.amount + 1 });
      expectGatewayError(changed, 409);
      const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM checkout_sessions WHERE merchant_transaction_id = $1`, [
        body.merchant_transaction_id,
      ]);
      expect(n).toBe(1);
      // Another merchant may use the same merchant_transaction_id: uniqueness is per client.
      const foreign = await gw(other)
        .post('/v2/checkout/initiate')
        .send({ ...body, service_code: other.serviceCode });
      expect(foreign.status).toBe(200);
      expect(foreign.body.checkout_reference).not.toBe(first.body.checkout_reference);
    });

    describe('each documented maximum length: the limit is accepted, one more character is a 4xx in the gateway shape', () => {
      const pad = (prefix: string, length: number, fill = 'x') => prefix + fill.repeat(length - prefix.length);
      const url = (length: number) => {
        const base = receiver.url('/long/');
        return base + 'p'.repeat(length - base.length);
      };
      const cases: Array<[string, number, (n: number) => string, boolean]> = [
        ['merchant_transaction_id', 64, (n) => pad(`m-${randomUUID()}-`, n), true],
        ['payer_name', 100, (n) => pad('Jane ', n, 'a'), true],
        // local part at most 64 characters, domain labels at most 63: 64 + 1 + 31 + 4 = 100.
        ['payer_email', 100, (n) => `${'a'.repeat(64)}@${'b'.repeat(n - 69)}.com`, true],
        ['payer_msisdn', 25, (n) => `+${'2547'.padEnd(n - 1, '1')}`, true],
        // Service codes are generated (CS…), so no 32-character code can exist: at the limit it is an unknown code.
        ['service_code', 32, (n) => pad('CS', n, '9'), false],
        ['account_number', 50, (n) => pad('ACC-', n, '7'), true],
        ['narration', 255, (n) => pad('Order ', n, 'n'), true],
        ['callback_url', 500, (n) => url(n), true],
        ['redirect_url', 500, (n) => url(n), true],
      ];

      it.each(cases)('%s (%i)', async (field, limit, make, validAtLimit) => {
        const atLimit = make(limit);
        const over = make(limit + 1);
        expect(atLimit).toHaveLength(limit);
        expect(over).toHaveLength(limit + 1);

        const accepted = await gw()
          .post('/v2/checkout/initiate')
          .send(checkoutBody(merchant, receiver, { [field]: atLimit }));
        if (validAtLimit) {
          expect(accepted.status).toBe(200);
          if (field === 'merchant_transaction_id') expect(accepted.body.merchant_transaction_id).toBe(atLimit);
          const status = await checkoutStatus(app, merchant, accepted.body.merchant_transaction_id);
          expect(status.status).toBe(200);
        } else {
          expectGatewayError(accepted, 400, 172);
          expect(accepted.body.message).toMatch(/service code/i);
        }

        const rejected = await gw()
          .post('/v2/checkout/initiate')
          .send(checkoutBody(merchant, receiver, { [field]: over }));
        expect(rejected.status).toBeGreaterThanOrEqual(400);
        expect(rejected.status).toBeLessThan(500);
        expectGatewayError(rejected, rejected.status);
        expect(rejected.body.message).toContain(field);
      });
    });

    it('refuses a non-integer amount with 400 and stores nothing', async () => {
      for (const amount of [100.5, 0, -5]) {
        const body = checkoutBody(merchant, receiver, { amount });
        const res = await gw().post('/v2/checkout/initiate').send(body);
        expectGatewayError(res, 400);
        expect(res.body.message).toContain('amount');
        expect((await checkoutStatus(app, merchant, body.merchant_transaction_id)).status).toBe(404);
      }
    });

    it('refuses plain-http callback and redirect URLs to a host that is not loopback (sandbox accepts http only for loopback)', async () => {
      for (const field of ['callback_url', 'redirect_url']) {
        const res = await gw()
          .post('/v2/checkout/initiate')
          .send(checkoutBody(merchant, receiver, { [field]: 'http://merchant.example.com/hook' }));
        expectGatewayError(res, 400, 172);
        expect(res.body.message).toContain(field);
      }
      const https = await gw()
        .post('/v2/checkout/initiate')
        .send(checkoutBody(merchant, receiver, { callback_url: 'https://merchant.example.com/hook' }));
      expect(https.status).toBe(200);
    });

    it('refuses an inactive service and a service of another merchant with 400 status_code 172', async () => {
      const inactive = await request(app.getHttpServer())
        .post('/api/v1/client-services')
        .set('authorization', merchant.tenant.auth)
        .send({
          client_code: merchant.clientCode,
          client_service_name: 'Dormant collections',
          service_code: 'CUSTOM_SERVICE',
          has_transaction_fee: false,
          minimum_transaction_amount: 1,
          maximum_transaction_amount: 1_000_000,
          is_active: 0,
        })
        .expect(201);
      const code = inactive.body.client_service_code as string;
      const wallet = await createWallet(app, merchant.tenant);
      await app.get(ClientServicesService).setSettlementWallet(dataSource(app).manager, merchant.clientId, code, wallet.account_id);

      for (const serviceCode of [code, other.serviceCode, 'CS000000404']) {
        const body = checkoutBody(merchant, receiver, { service_code: serviceCode });
        const res = await gw().post('/v2/checkout/initiate').send(body);
        expectGatewayError(res, 400, 172);
        expect(res.body.message).toContain(serviceCode);
        expect((await checkoutStatus(app, merchant, body.merchant_transaction_id)).status).toBe(404);
      }
    });

    it("answers 404 status_code 120 for another merchant's checkout and for an unknown one", async () => {
      const { mtid } = await initiateCheckout(app, merchant, receiver);
      const foreign = await checkoutStatus(app, other, mtid);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ status_code: 120, status_description: 'Transaction not found', message: expect.any(String) });
      const unknown = await checkoutStatus(app, merchant, `never-${randomUUID()}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.status_code).toBe(120);
      expect((await checkoutStatus(app, merchant, mtid)).status).toBe(200);
    });
  });

  describe('paying', () => {
    it('pays in full: 803 → 851 while processing → 801 with the payment, a signed callback in the checkout shape, money net of fee', async () => {
      const settlementBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
      const feeBefore = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
      const { body, reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 1500 });
      expect((await checkoutStatus(app, merchant, mtid)).body.status).toBe(803);

      // The worker stops claiming, so the session is read while its payment is processing.
      const startClaiming = await stopClaiming(app);
      const paid = await pay(reference, { msisdn: '254712345678' });
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ status: 851, payment_status: 703 });
      const processing = await checkoutStatus(app, merchant, mtid);
      expect(processing.body.status).toBe(851);
      expect(processing.body.payments).toEqual([]);
      // One payment at a time.
      const second = await pay(reference, { msisdn: '254712345678' });
      expect(second.status).toBe(409);
      startClaiming();

      const done = await waitForCheckout(app, merchant, mtid, 801);
      expect(done.amount).toBe('1500');
      expect(done.payments).toHaveLength(1);
      const payment = done.payments[0];
      expect(payment).toMatchObject({
        event: 'successful_payment',
        amount: '1500.0000',
        payment_status: 700,
        client_code: merchant.clientCode,
        country_code: 'KEN',
        payer_msisdn: '254712345678',
        service_code: merchant.serviceCode,
        currency_code: 'KES',
        account_number: body.account_number,
        external_reference: mtid,
        receiver_narration: body.narration,
        payment_account_reference: '254712345678',
      });
      expect(payment.payment_date).toMatch(ISO_UTC);
      expect(payment.payer_transaction_id).toMatch(/\S/);
      expect(payment.transaction_id).toMatch(/^\d+$/);

      const [callback] = await callbacksAt(body.callback_url, 1);
      expect(callback.method).toBe('POST');
      expect(callback.headers.authorization).toBe(
        `Basic ${Buffer.from(`${merchant.callbackUsername}:${merchant.callbackPassword}`).toString('base64')}`,
      );
      expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
      expect(Object.keys(callback.body).sort()).toEqual(
        ['amount', 'checkout_reference', 'currency', 'merchant_transaction_id', 'narration', 'payments', 'status', 'timestamp'].sort(),
      );
      expect(callback.body).toMatchObject({
        amount: '1500',
        checkout_reference: reference,
        currency: 'KES',
        merchant_transaction_id: mtid,
        narration: body.narration,
        status: 801,
      });
      expect(callback.body.payments).toEqual([
        expect.objectContaining({ event: 'successful_payment', payment_status: 700, transaction_id: payment.transaction_id }),
      ]);

      // The settlement wallet receives the amount less the merchant-borne fee (FIXED 10); the fee goes to fee income.
      expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(settlementBefore, 1490));
      expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(plus(feeBefore, 10));

      // A paid checkout cannot be paid again.
      const again = await pay(reference, { msisdn: '254712345678' });
      expect(again.status).toBe(409);
      expect((await waitForCheckout(app, merchant, mtid, 801)).payments).toHaveLength(1);
    });

    it('part payment: a smaller amount gives 802 with the balance due, paying the rest gives 801', async () => {
      const { body, reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 1000 });
      // A decimal string, as the document's number | string allows; a fraction of the currency unit is refused.
      expect((await pay(reference, { msisdn: '254712345678', amount: '400.5' })).status).toBe(400);
      const part = await pay(reference, { msisdn: '254712345678', amount: '400' });
      expect(part.status).toBe(200);
      const partPaid = await waitForCheckout(app, merchant, mtid, 802);
      // Its callback is in before the rest is paid, so the two callbacks arrive in the order of the payments.
      await callbacksAt(body.callback_url, 1);
      expect(partPaid.payments).toHaveLength(1);
      expect(partPaid.payments[0]).toMatchObject({ amount: '400.0000', payment_status: 700 });
      const state = await request(app.getHttpServer()).get(`/checkout/${reference}/state`);
      expect(state.body).toMatchObject({ status: 802, amount: 1000, paid: 400, outstanding: 600 });

      // More than what is due is refused; the rest (the default amount) completes the checkout.
      expect((await pay(reference, { msisdn: '254712345678', amount: 601 })).status).toBe(400);
      expect((await pay(reference, { msisdn: '254712345679' })).status).toBe(200);
      const full = await waitForCheckout(app, merchant, mtid, 801);
      expect(full.payments.map((p: { amount: string }) => p.amount)).toEqual(['400.0000', '600.0000']);
      expect(full.payments.every((p: { payment_status: number }) => p.payment_status === 700)).toBe(true);

      const callbacks = await callbacksAt(body.callback_url, 2);
      expect(callbacks.map((c) => c.body.status)).toEqual([802, 801]);
      expect((callbacks[1].body.payments as unknown[]).length).toBe(2);
    });

    it('a failed payment (254700000001) reads 701 and the checkout is unpaid again (803), so the payer can retry', async () => {
      const { body, reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 300 });
      expect((await pay(reference, { msisdn: '254700000001' })).status).toBe(200);
      const unpaid = await waitFor('the failed payment to be recorded', async () => {
        const res = await checkoutStatus(app, merchant, mtid);
        return res.body.status === 803 && res.body.payments.length === 1 ? res.body : undefined;
      });
      expect(unpaid.payments[0]).toMatchObject({ event: 'failed_payment', payment_status: 701, payer_msisdn: '254700000001' });
      const [callback] = await callbacksAt(body.callback_url, 1);
      expect(callback.body).toMatchObject({ status: 803, merchant_transaction_id: mtid });
      expect(callback.body.payments).toEqual([expect.objectContaining({ payment_status: 701 })]);

      // Retry with another number succeeds.
      expect((await pay(reference, { msisdn: '254712345678' })).status).toBe(200);
      const paid = await waitForCheckout(app, merchant, mtid, 801);
      expect(paid.payments.map((p: { payment_status: number }) => p.payment_status)).toEqual([701, 700]);
    });

    it('a jammed payment (254700000003) puts the checkout in 850 and it can no longer be paid', async () => {
      const { reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 200 });
      expect((await pay(reference, { msisdn: '254700000003' })).status).toBe(200);
      await waitForCheckout(app, merchant, mtid, 850);
      expect((await pay(reference, { msisdn: '254712345678' })).status).toBe(409);
      const page = await request(app.getHttpServer()).get(`/checkout/${reference}`);
      expect(page.status).toBe(409);
      expect(page.text).toContain('can no longer be paid');
    });

    it('refuses a malformed phone number and a non-integer amount on the pay endpoint', async () => {
      const { reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 200 });
      for (const body of [{}, { msisdn: 'call me' }, { msisdn: '254712345678', amount: 10.5 }, { msisdn: '254712345678', amount: 0 }]) {
        const res = await pay(reference, body);
        expect(res.status).toBe(400);
        expect(res.body.message).toEqual(expect.any(String));
      }
      expect((await checkoutStatus(app, merchant, mtid)).body.status).toBe(803);
    });
  });

  describe('expiry and the hosted page addresses', () => {
    it('at its end (expires_in minutes) an unpaid checkout expires (820, a callback) and a part-paid one keeps 802; neither takes a payment', async () => {
      const unpaid = await initiateCheckout(app, merchant, receiver, { amount: 100, expires_in: 3 });
      const partPaid = await initiateCheckout(app, merchant, receiver, { amount: 1000, expires_in: 3 });
      expect((await request(app.getHttpServer()).get(`/checkout/${unpaid.reference}`)).status).toBe(200);
      expect((await pay(partPaid.reference, { msisdn: '254712345678', amount: 400 })).status).toBe(200);
      await waitForCheckout(app, merchant, partPaid.mtid, 802);

      const expired = await waitForCheckout(app, merchant, unpaid.mtid, 820, 10_000);
      expect(expired.payments).toEqual([]);
      const [callback] = await callbacksAt(unpaid.body.callback_url, 1);
      expect(callback.body).toMatchObject({
        status: 820,
        merchant_transaction_id: unpaid.mtid,
        checkout_reference: unpaid.reference,
        payments: [],
      });

      // The part-paid session's end has been handled too (its expiry job done): it stays 802, announced once, as 802.
      await waitFor('the part-paid session to have reached its end', async () => {
        const [job] = await dataSource(app).query(
          `SELECT o.done_at FROM outbox o JOIN checkout_sessions cs ON cs.client_id = o.client_id AND o.payload->>'sessionId' = cs.id::text
           WHERE o.topic = $1 AND cs.checkout_reference = $2`,
          [TOPICS.expireCheckout, partPaid.reference],
        );
        return job?.done_at ?? undefined;
      });
      expect((await checkoutStatus(app, merchant, partPaid.mtid)).body).toMatchObject({ status: 802, payments: [expect.anything()] });
      const announced = await dataSource(app).query(`SELECT event FROM callback_deliveries WHERE client_id = $1 AND reference = $2`, [
        merchant.clientId,
        partPaid.mtid,
      ]);
      expect(announced).toEqual([{ event: 'checkout_802' }]);
      const state = await request(app.getHttpServer()).get(`/checkout/${partPaid.reference}/state`);
      expect(state.body).toMatchObject({ status: 802, paid: 400, outstanding: 600, expired: true });

      for (const { reference } of [unpaid, partPaid]) {
        const gone = await request(app.getHttpServer()).get(`/checkout/${reference}`);
        expect(gone.status).toBe(410);
        expect(gone.headers['content-type']).toMatch(/^text\/html/);
        expect(gone.text).toContain('Checkout expired');
        expect(gone.text).not.toMatch(/at \S+ \(|Error:|\.ts:\d+/);
        expect((await pay(reference, { msisdn: '254712345678' })).status).toBe(410);
      }
    });

    it('an unknown checkout address is an explanatory HTML page (404) without internals', async () => {
      for (const reference of ['CHK0000000000000000', 'not-a-reference', `CHK${'Z'.repeat(16)}`]) {
        const res = await request(app.getHttpServer()).get(`/checkout/${reference}`);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('Checkout not found');
        expect(res.text).toContain('There is no checkout at this address');
        expect(res.text).not.toMatch(/at \S+ \(|Error:|\.ts:\d+|node_modules|stack/i);
        expect((await pay(reference, { msisdn: '254712345678' })).status).toBe(404);
      }
    });
  });
});
