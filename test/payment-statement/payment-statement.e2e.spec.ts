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
import { dataSource } from '../support/test-app';

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
    // A declined payment cost the merchant nothing: no fee was booked.
    expect(declined).toMatchObject({
      payment_id: created[1].id,
      amount: 75,
      payment_status: 701,
      receiver_narration: 'Declined order',
      service_charge: 0,
    });
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

  describe('paging a long period', () => {
    /** A merchant of its own with ROWS payments in DAY, written in bulk two to an instant (the id breaks the tie). */
    let bulk: GatewayMerchant;
    const ROWS = 2_500;
    const DAY = { start_date: '2024-03-01T00:00:00Z', end_date: '2024-03-01T23:59:59Z' };
    let ordered: number[];

    /** Payments of `bulk` created at DAY's start + the given milliseconds, one per element; returns their ids. */
    const insert = async (millis: number[]): Promise<number[]> => {
      const rows = await dataSource(app).query(
        `INSERT INTO payments (client_id, client_service_id, external_reference, request_fingerprint, origin_channel_code,
           originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number, currency, country_code,
           service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge, payment_method_code,
           extra_data, description, notify_client, notify_originator, callback_url, payment_status, created_at, updated_at)
         SELECT c.client_id, c.id, 'bulk-' || gen_random_uuid(), 'test', 'API', '254700000003', '254700000003', 'Payer',
                'payer@example.com', 'ACC-1', '', 'KES', 'KEN', 100, 0, 100, 10, false, 'MMONEY_KEN', '{}'::jsonb, 'Bulk', false, false,
                'https://merchant.invalid/cb', 703, $3::timestamptz + ms * interval '1 millisecond', now()
         FROM client_services c, unnest($4::int[]) ms WHERE c.client_id = $1 AND c.code = $2
         RETURNING id`,
        [bulk.clientId, bulk.serviceCode, DAY.start_date, millis],
      );
      return rows.map((r: { id: string }) => Number(r.id));
    };
    const ids = (res: request.Response) => res.body.map((r: { payment_id: number }) => r.payment_id) as number[];
    /** Every row of DAY, reading pages of `limit` one after the other as a merchant would. */
    const readAll = async (limit: number, between: (offset: number) => Promise<void> = async () => undefined) => {
      const seen: number[] = [];
      for (let offset = 0; ; offset += limit) {
        const page = await statement({ ...DAY, offset, limit }, bulk);
        expect(page.status).toBe(200);
        seen.push(...ids(page));
        if (page.body.length < limit) return seen;
        await between(offset + limit);
      }
    };

    beforeAll(async () => {
      bulk = await createGatewayMerchant(app);
      await insert(Array.from({ length: ROWS }, (_, k) => 10 + Math.floor(k / 2)));
      const rows = await dataSource(app).query(`SELECT id FROM payments WHERE client_id = $1 ORDER BY created_at, id`, [bulk.clientId]);
      ordered = rows.map((r: { id: string }) => Number(r.id));
    });

    it('gives every row once, in (created_at, id) order, however deep the page; any offset reads the same rows', async () => {
      const seen = await readAll(300);
      expect(seen).toEqual(ordered);
      // Offsets that no page ended at are counted from the start of the period.
      expect(ids(await statement({ ...DAY, offset: 1234, limit: 100 }, bulk))).toEqual(ordered.slice(1234, 1334));
      expect(ids(await statement({ ...DAY, offset: 2499, limit: 5 }, bulk))).toEqual(ordered.slice(2499));
      // A page read again, and the one after a shorter page, are the same rows.
      expect(ids(await statement({ ...DAY, offset: 600, limit: 300 }, bulk))).toEqual(ordered.slice(600, 900));
      expect(ids(await statement({ ...DAY, offset: 900, limit: 50 }, bulk))).toEqual(ordered.slice(900, 950));
    });

    it('neither repeats nor loses a row when payments are created between pages', async () => {
      let atEnd: number | undefined;
      const seen = await readAll(500, async (next) => {
        if (next !== 1000) return;
        // One created after everything read so far, and one back-dated into the first page (a charge whose
        // transaction committed after that page was read): OFFSET would have shown row 999 again.
        [atEnd] = await insert([60_000]);
        await insert([20]);
      });
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual([...ordered, atEnd]);
    });
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
