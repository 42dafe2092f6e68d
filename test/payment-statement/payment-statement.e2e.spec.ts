import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ISO_UTC } from '../support/collections-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  sleep,
  startIsolatedSandbox,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';

const ROW_FIELDS = [
  'payment_id',
  'payer_transaction_reference',
  'external_reference',
  'account_number',
  'amount',
  'currency',
  'payment_status',
  'receiver_narration',
  'payment_method',
  'service_charge',
  'service_code',
  'created_at',
].sort();

/**
 * The payment statement, POST /v1/statement (collection document §2 "Statement row", §4, §7 rule 3, §8; provider
 * contract §10 "Statements"): the caller's payments created in a period, with the documented fields and types,
 * offset/limit paging (defaults 0 and 100), and errors in the statement's own body shape.
 */
describe('payment statement', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  /** The 105 payments of `merchant`, in creation order, with the instants around the middle batch. */
  const created: Array<{ id: number; reference: string; amount: string }> = [];
  let middleStart: string;
  let middleEnd: string;
  let start: string;
  let end: string;
  let otherReference: string;

  const statement = (body: unknown, m: GatewayMerchant = merchant) =>
    gateway(app, m.token)
      .post('/v1/statement')
      .send(body as object);

  async function charge(m: GatewayMerchant, overrides: Record<string, unknown>) {
    const body = chargeBody(m, overrides);
    const res = await gateway(app, m.token).post('/v1/mobile-money/charge').send(body);
    if (res.status !== 200) throw new Error(`charge failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.charge_request_id as number, reference: body.external_reference as string, amount: body.amount as string };
  }

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app } = sandbox);
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);

    start = new Date().toISOString();
    await sleep(20);
    // Two that settle (one succeeds, one fails), then three in a window of their own, then 100 that stay pending.
    created.push(
      await charge(merchant, { amount: '120.5', payer_msisdn: '254712345678', description: 'First order', account_number: 'ACC-1' }),
    );
    created.push(await charge(merchant, { amount: '75', payer_msisdn: '254700000001', description: 'Declined order' }));
    otherReference = (await charge(other, { amount: '999' })).reference;
    await sleep(30);
    middleStart = new Date().toISOString();
    await sleep(30);
    for (let i = 0; i < 3; i++) created.push(await charge(merchant, { amount: String(20 + i), payer_msisdn: '254700000002' }));
    await sleep(30);
    middleEnd = new Date().toISOString();
    await sleep(30);
    for (let i = 0; i < 100; i++) created.push(await charge(merchant, { amount: String(200 + i), payer_msisdn: '254700000002' }));
    await sleep(20);
    end = new Date().toISOString();
    await waitForPaymentStatus(app, merchant, created[0].id, 700);
    await waitForPaymentStatus(app, merchant, created[1].id, 701);
  });
  afterAll(async () => sandbox?.close());

  it('rows carry exactly the documented fields with the documented types', async () => {
    const res = await statement({ start_date: start, end_date: end, limit: 2 });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    const [paid, declined] = res.body;
    for (const row of res.body) {
      expect(Object.keys(row).sort()).toEqual(ROW_FIELDS);
      expect(Number.isInteger(row.payment_id)).toBe(true);
      expect(typeof row.amount).toBe('number');
      expect(Number.isInteger(row.payment_status)).toBe(true);
      expect(typeof row.service_charge).toBe('number');
      expect(row.created_at).toMatch(ISO_UTC);
      for (const field of [
        'payer_transaction_reference',
        'external_reference',
        'account_number',
        'currency',
        'receiver_narration',
        'payment_method',
        'service_code',
      ]) {
        expect(typeof row[field]).toBe('string');
      }
    }
    expect(paid).toMatchObject({
      payment_id: created[0].id,
      external_reference: created[0].reference,
      account_number: 'ACC-1',
      amount: 120.5,
      currency: 'KES',
      payment_status: 700,
      receiver_narration: 'First order',
      payment_method: 'MMONEY_KEN',
      service_charge: 10,
      service_code: merchant.serviceCode,
    });
    expect(paid.payer_transaction_reference).toMatch(/\S/);
    expect(declined).toMatchObject({ payment_id: created[1].id, amount: 75, payment_status: 701, receiver_narration: 'Declined order' });
    // A charge created at a given instant is listed with that instant.
    expect(Date.parse(paid.created_at)).toBeGreaterThanOrEqual(Date.parse(start));
  });

  it('defaults to offset 0 and limit 100, oldest first; offset and limit page through the rest', async () => {
    const first = await statement({ start_date: start, end_date: end });
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(100);
    expect(first.body.map((r: { payment_id: number }) => r.payment_id)).toEqual(created.slice(0, 100).map((c) => c.id));

    const rest = await statement({ start_date: start, end_date: end, offset: 100 });
    expect(rest.body.map((r: { payment_id: number }) => r.payment_id)).toEqual(created.slice(100).map((c) => c.id));
    expect(rest.body).toHaveLength(created.length - 100);

    const page = await statement({ start_date: start, end_date: end, offset: 1, limit: 3 });
    expect(page.body.map((r: { payment_id: number }) => r.payment_id)).toEqual(created.slice(1, 4).map((c) => c.id));
    const explicit = await statement({ start_date: start, end_date: end, offset: 0, limit: 100 });
    expect(explicit.body).toEqual(first.body);
    const beyond = await statement({ start_date: start, end_date: end, offset: 1000 });
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual([]);
  });

  it('lists only payments created between start_date and end_date', async () => {
    const middle = await statement({ start_date: middleStart, end_date: middleEnd });
    expect(middle.status).toBe(200);
    expect(middle.body.map((r: { payment_id: number }) => r.payment_id)).toEqual(created.slice(2, 5).map((c) => c.id));
    expect(middle.body.map((r: { amount: number }) => r.amount)).toEqual([20, 21, 22]);

    const before = await statement({ start_date: '2001-01-01T00:00:00Z', end_date: start });
    expect(before.body).toEqual([]);
    // A date-only end_date covers that whole (UTC) day.
    const today = new Date().toISOString().slice(0, 10);
    const wholeDay = await statement({ start_date: today, end_date: today, limit: 1000 });
    expect(wholeDay.body).toHaveLength(created.length);
  });

  it("never shows another merchant's payments", async () => {
    const mine = await statement({ start_date: start, end_date: end, limit: 1000 });
    expect(mine.body).toHaveLength(created.length);
    expect(mine.body.some((r: { external_reference: string }) => r.external_reference === otherReference)).toBe(false);
    const theirs = await statement({ start_date: start, end_date: end, limit: 1000 }, other);
    expect(theirs.body.map((r: { external_reference: string }) => r.external_reference)).toEqual([otherReference]);
  });

  describe('errors use the statement body {response_code, response_description, error_code}', () => {
    const expectStatementError = (res: request.Response) => {
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['error_code', 'response_code', 'response_description']);
      expect(typeof res.body.response_code).toBe('number');
      expect(typeof res.body.response_description).toBe('string');
      expect(typeof res.body.error_code).toBe('string');
    };

    it('end_date before start_date', async () => {
      const res = await statement({ start_date: '2025-03-02T00:00:00Z', end_date: '2025-03-01T00:00:00Z' });
      expectStatementError(res);
      expect(res.body.response_description).toMatch(/end_date/);
    });

    it.each([
      ['start_date missing', { end_date: '2025-03-01T00:00:00Z' }, /start_date/],
      ['end_date missing', { start_date: '2025-03-01T00:00:00Z' }, /end_date/],
      ['both missing', {}, /start_date/],
      ['a date that is not ISO 8601', { start_date: '01/03/2025', end_date: '2025-03-02' }, /start_date/],
      ['a date that does not exist', { start_date: '2025-02-30T00:00:00Z', end_date: '2025-03-02' }, /start_date/],
    ])('%s', async (_what, body, mention) => {
      const res = await statement(body);
      expectStatementError(res);
      expect(res.body.response_description).toMatch(mention);
    });

    it.each([
      ['limit above the maximum', { limit: 1001 }, /limit/],
      ['limit zero', { limit: 0 }, /limit/],
      ['negative offset', { offset: -1 }, /offset/],
      ['fractional limit', { limit: 2.5 }, /limit/],
    ])('%s', async (_what, paging, mention) => {
      const res = await statement({ start_date: start, end_date: end, ...paging });
      expectStatementError(res);
      expect(res.body.response_description).toMatch(mention);
    });

    it('without a token the answer is 401', async () => {
      const res = await request(app.getHttpServer()).post('/v1/statement').send({ start_date: start, end_date: end });
      expect(res.status).toBe(401);
      expect(res.body.error ?? res.body.message).toBeDefined();
    });
  });
});
