import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  ledgerBalance,
  IsolatedSandbox,
  MerchantReceiver,
  paymentCount,
  sleep,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/**
 * Charge idempotency on external_reference (provider contract §5 "Idempotency", fixed) and tenancy (§2): replays
 * answer the original response, a reused reference with another body is a 409, concurrent duplicates make one
 * charge that settles once, and no client sees another's charges.
 */
describe('charge idempotency and tenancy', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '300', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  const post = (m: GatewayMerchant, body: object) => gateway(app, m.token).post('/v1/mobile-money/charge').send(body);

  it('20 identical charges in parallel make one charge: one id in all 20 answers, one row, settled once, one callback', async () => {
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);
    const body = chargeBody(merchant, { callback_url: receiver.url(), amount: 100 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(merchant, body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const ids = new Set(answers.map((a) => a.body.charge_request_id));
    expect(ids.size).toBe(1);
    for (const answer of answers) expect(answer.body).toEqual(answers[0].body);
    expect(answers[0].body).toMatchObject({ status_code: 176, external_reference: body.external_reference });

    const rows = await dataSource(app).query(`SELECT id FROM payments WHERE client_id = $1 AND external_reference = $2`, [
      merchant.clientId,
      body.external_reference,
    ]);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].id)).toBe(answers[0].body.charge_request_id);

    await waitForPaymentStatus(app, merchant, rows[0].id, 700);
    await waitFor('the callback', () => receiver.at(body.callback_url as string).length > 0);
    await sleep(600);
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(new Decimal(before).plus(90).toFixed(4));
    expect(receiver.at(body.callback_url as string)).toHaveLength(1);
    const [entries] = await dataSource(app).query(`SELECT count(*)::int AS n FROM payments WHERE id = $1 AND entry_id IS NOT NULL`, [
      rows[0].id,
    ]);
    expect(entries.n).toBe(1);

    // A replay after settlement still answers the original acceptance, and moves nothing.
    const replay = await post(merchant, body);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(answers[0].body);
    await sleep(400);
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(new Decimal(before).plus(90).toFixed(4));
  });

  it('the same request written differently (key order, amount as number or string with decimals) is a replay', async () => {
    const body = chargeBody(merchant, { amount: 120, transaction_charge: 0 });
    const first = await post(merchant, body).expect(200);
    const reordered = Object.fromEntries(Object.entries({ ...body, amount: '120.00', transaction_charge: '0.0000' }).reverse());
    const again = await post(merchant, reordered);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await paymentCount(app, merchant.clientId)).toBeGreaterThan(0);
  });

  it.each<[string, Record<string, unknown>]>([
    ['another amount', { amount: 101 }],
    ['another payer', { payer_msisdn: '254799999999' }],
    ['other extra_data', { extra_data: { order: 'B-2' } }],
    ['another callback_url', { callback_url: 'https://merchant.invalid/other' }],
    ['add_transaction_charge flipped', { add_transaction_charge: true, transaction_charge: '5' }],
  ])('the same external_reference with %s → 409 in the gateway shape; the original is untouched', async (_name, change) => {
    const body = chargeBody(merchant, { amount: 100 });
    const first = await post(merchant, body).expect(200);
    const before = await paymentCount(app, merchant.clientId);
    const conflict = await post(merchant, { ...body, ...change });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ status_code: expect.any(Number), status_description: expect.any(String), message: expect.any(String) });
    expect(await paymentCount(app, merchant.clientId)).toBe(before);
    const status = await gateway(app, merchant.token).get(`/v1/transaction/${first.body.charge_request_id}/status`).expect(200);
    expect(status.body).toMatchObject({ amount: '100.0000', payer_msisdn: body.payer_msisdn });
    // The original request still replays.
    expect((await post(merchant, body)).body).toEqual(first.body);
  });

  it('racing bodies under one reference: one charge wins, every other answer is a replay of it or a 409', async () => {
    const base = chargeBody(merchant);
    const bodies = Array.from({ length: 12 }, (_, i) => ({ ...base, amount: 100 + (i % 3) }));
    const answers = await Promise.all(bodies.map((b) => post(merchant, b)));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted.length).toBeGreaterThan(0);
    expect(new Set(accepted.map((a) => a.body.charge_request_id)).size).toBe(1);
    expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
    const rows = await dataSource(app).query(`SELECT service_amount FROM payments WHERE client_id = $1 AND external_reference = $2`, [
      merchant.clientId,
      base.external_reference,
    ]);
    expect(rows).toHaveLength(1);
    for (const a of accepted) expect(a.body.service_amount).toBe(new Decimal(rows[0].service_amount).toFixed(4));
  });

  it('references are per client: two clients may both use one external_reference, and get separate charges', async () => {
    const reference = `shared-${Date.now()}`;
    const mine = await post(merchant, chargeBody(merchant, { external_reference: reference })).expect(200);
    const theirs = await post(other, chargeBody(other, { external_reference: reference })).expect(200);
    expect(theirs.body.charge_request_id).not.toBe(mine.body.charge_request_id);
    const [a, b] = await Promise.all([
      gateway(app, merchant.token).get(`/v1/transaction/${mine.body.charge_request_id}/status`).expect(200),
      gateway(app, other.token).get(`/v1/transaction/${theirs.body.charge_request_id}/status`).expect(200),
    ]);
    expect(a.body.client_code).toBe(merchant.clientCode);
    expect(b.body.client_code).toBe(other.clientCode);
  });

  it('two clients cannot read each other’s charges, callbacks or OTP flows', async () => {
    const body = chargeBody(merchant, { payer_msisdn: '254700000004', callback_url: receiver.url() });
    const mine = await post(merchant, body).expect(200);
    const theirsView = await gateway(app, other.token).get(`/v1/transaction/${mine.body.charge_request_id}/status`);
    expect(theirsView.status).toBe(404);
    expect(theirsView.body.status_code).toBe(120);
    // The other client cannot complete (or burn attempts of) this OTP charge.
    for (let i = 0; i < 5; i++) {
      const otp = await gateway(app, other.token)
        .post('/v1/mobile-money/verify-otp')
        .send({ reference: body.external_reference, otp: '000000' });
      expect(otp.status).toBe(404);
    }
    const ok = await gateway(app, merchant.token)
      .post('/v1/mobile-money/verify-otp')
      .send({ reference: body.external_reference, otp: '123456' });
    expect(ok.body.status).toBe('SUCCESSFUL');
    await waitForPaymentStatus(app, merchant, mine.body.charge_request_id, 700);
    await waitFor('the callback', () => receiver.at(body.callback_url as string).length > 0);
    expect((await callbackLog(app, other, body.external_reference as string)).deliveries).toEqual([]);
    expect((await callbackLog(app, merchant, body.external_reference as string)).deliveries).toHaveLength(1);
  });

  it("a charge naming another client's client_code → 403 in the gateway shape, nothing written", async () => {
    const before = await paymentCount(app, other.clientId);
    const mineBefore = await paymentCount(app, merchant.clientId);
    const res = await post(merchant, chargeBody(merchant, { client_code: other.clientCode, service_code: other.serviceCode }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ status_code: expect.any(Number), status_description: expect.any(String), message: expect.any(String) });
    expect(await paymentCount(app, other.clientId)).toBe(before);
    expect(await paymentCount(app, merchant.clientId)).toBe(mineBefore);
  });

  it("another client's service code is an invalid service code (400, 172)", async () => {
    const res = await post(merchant, chargeBody(merchant, { service_code: other.serviceCode }));
    expect(res.status).toBe(400);
    expect(res.body.status_code).toBe(172);
  });
});
