import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';
import {
  balances,
  createService,
  fund,
  http,
  moneyBody,
  moneyFootprint,
  post,
  serviceBody,
  transferBody,
  walletSet,
} from '../support/money-fixtures';

type Target = 'CREDIT' | 'DEBIT' | 'TRANSFER' | 'SERVICE' | 'REVERSE';

interface Case {
  name: string;
  target: Target;
  /** An object is sent as JSON; a string is sent as the raw body text. */
  body: (ctx: Ctx) => unknown;
  contentType?: string;
}

interface Ctx {
  tenant: TestTenant;
  a: string;
  b: string;
  service: string;
}

const LONG = 'x'.repeat(100_000);

/** A valid credit/debit body with one field replaced (or removed when the value is undefined). */
const money = (field: string, value: unknown) => (c: Ctx) => {
  const body: Record<string, unknown> = moneyBody(c.tenant, c.a, c.service, 10);
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
};
/** The same, as raw JSON text with `fragment` spliced in as the value of `field`. */
const moneyRaw = (field: string, fragment: string) => (c: Ctx) => {
  const body: Record<string, unknown> = moneyBody(c.tenant, c.a, c.service, 10);
  body[field] = '__RAW__';
  return JSON.stringify(body).replace('"__RAW__"', fragment);
};
const transferWith = (field: string, value: unknown) => (c: Ctx) => {
  const body: Record<string, unknown> = transferBody(c.tenant, c.a, c.b, c.service, 10);
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
};
const serviceWith = (field: string, value: unknown) => (c: Ctx) => {
  const body: Record<string, unknown> = serviceBody(c.tenant, {
    has_transaction_fee: true,
    transaction_fee_type: 'FIXED',
    transaction_fee: 1,
  });
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
};

const CASES: Case[] = [
  // credit / debit
  { name: 'credit without transaction_amount', target: 'CREDIT', body: money('transaction_amount', undefined) },
  { name: 'credit without account_number', target: 'CREDIT', body: money('account_number', undefined) },
  { name: 'credit without source_transaction_id', target: 'CREDIT', body: money('source_transaction_id', undefined) },
  { name: 'credit without currency', target: 'CREDIT', body: money('currency', undefined) },
  { name: 'credit without client_service_code', target: 'CREDIT', body: money('client_service_code', undefined) },
  { name: 'credit with amount "NaN"', target: 'CREDIT', body: money('transaction_amount', 'NaN') },
  { name: 'debit with amount "Infinity"', target: 'DEBIT', body: money('transaction_amount', 'Infinity') },
  { name: 'credit with a negative amount', target: 'CREDIT', body: money('transaction_amount', -10) },
  { name: 'debit with a negative amount (money would flow in)', target: 'DEBIT', body: money('transaction_amount', -10) },
  { name: 'credit with a negative numeric string', target: 'CREDIT', body: money('transaction_amount', '-10') },
  { name: 'credit with amount 0', target: 'CREDIT', body: money('transaction_amount', 0) },
  { name: 'debit with amount "0.0000"', target: 'DEBIT', body: money('transaction_amount', '0.0000') },
  { name: 'credit with amount 1e400 as raw JSON', target: 'CREDIT', body: moneyRaw('transaction_amount', '1e400') },
  { name: 'debit with amount -1e400 as raw JSON', target: 'DEBIT', body: moneyRaw('transaction_amount', '-1e400') },
  { name: 'credit with 5 decimals', target: 'CREDIT', body: money('transaction_amount', 10.12345) },
  { name: 'credit with 5 decimals as a string', target: 'CREDIT', body: money('transaction_amount', '10.00001') },
  { name: 'credit with 16 integer digits', target: 'CREDIT', body: money('transaction_amount', 1234567890123456) },
  { name: 'credit with 16 integer digits as a string', target: 'CREDIT', body: money('transaction_amount', '1234567890123456') },
  { name: 'credit with a non-numeric string amount', target: 'CREDIT', body: money('transaction_amount', 'ten') },
  { name: 'credit with a boolean amount', target: 'CREDIT', body: money('transaction_amount', true) },
  { name: 'credit with an object amount', target: 'CREDIT', body: money('transaction_amount', { value: 10 }) },
  { name: 'credit with an array amount', target: 'CREDIT', body: money('transaction_amount', [10]) },
  { name: 'credit with a null amount', target: 'CREDIT', body: money('transaction_amount', null) },
  { name: 'credit with currency "XYZ"', target: 'CREDIT', body: money('currency', 'XYZ') },
  { name: 'credit with lower-case currency', target: 'CREDIT', body: money('currency', 'kes') },
  { name: 'credit with a 100,000-character source_transaction_id', target: 'CREDIT', body: money('source_transaction_id', LONG) },
  { name: 'credit with a 100,000-character narration', target: 'CREDIT', body: money('transaction_narration', LONG) },
  { name: 'credit with a 100,000-character account_number', target: 'CREDIT', body: money('account_number', LONG) },
  { name: 'credit with an object as account_number', target: 'CREDIT', body: money('account_number', { number: '1' }) },
  { name: 'credit with an array as client_service_code', target: 'CREDIT', body: money('client_service_code', ['CS1']) },
  { name: 'credit with a number as source_transaction_id', target: 'CREDIT', body: money('source_transaction_id', 12345) },
  { name: 'credit with an empty source_transaction_id', target: 'CREDIT', body: money('source_transaction_id', '') },
  { name: 'credit with null client_code', target: 'CREDIT', body: money('client_code', null) },
  { name: 'credit with a string as source_transaction_data', target: 'CREDIT', body: money('source_transaction_data', 'data') },
  { name: 'credit with an invalid transaction_date', target: 'CREDIT', body: money('transaction_date', 'yesterday') },
  { name: 'credit with a null body', target: 'CREDIT', body: () => 'null' },
  { name: 'credit with an array body', target: 'CREDIT', body: (c) => JSON.stringify([moneyBody(c.tenant, c.a, c.service, 10)]) },
  { name: 'credit with a string body', target: 'CREDIT', body: () => '"CREDIT 10"' },
  { name: 'credit with a number body', target: 'CREDIT', body: () => '10' },
  { name: 'credit with an empty JSON object', target: 'CREDIT', body: () => ({}) },
  { name: 'credit with invalid JSON', target: 'CREDIT', body: (c) => `{"account_number": "${c.a}", "transaction_amount": 10,` },
  {
    name: 'credit with trailing garbage after JSON',
    target: 'CREDIT',
    body: (c) => `${JSON.stringify(moneyBody(c.tenant, c.a, c.service, 10))}}`,
  },
  { name: 'credit with an empty body', target: 'CREDIT', body: () => '' },
  {
    name: 'credit sent as text/plain',
    target: 'CREDIT',
    body: (c) => JSON.stringify(moneyBody(c.tenant, c.a, c.service, 10)),
    contentType: 'text/plain',
  },
  {
    name: 'credit sent as a form',
    target: 'CREDIT',
    body: (c) => `account_number=${c.a}&transaction_amount=10&currency=KES`,
    contentType: 'application/x-www-form-urlencoded',
  },
  {
    name: 'debit sent as text/plain',
    target: 'DEBIT',
    body: (c) => JSON.stringify(moneyBody(c.tenant, c.a, c.service, 10)),
    contentType: 'text/plain',
  },

  // transfer
  { name: 'transfer without destination_account_number', target: 'TRANSFER', body: transferWith('destination_account_number', undefined) },
  { name: 'transfer without transaction_source', target: 'TRANSFER', body: transferWith('transaction_source', undefined) },
  {
    name: 'transfer with a negative amount (would move money backwards)',
    target: 'TRANSFER',
    body: transferWith('transaction_amount', -100),
  },
  { name: 'transfer with amount "NaN"', target: 'TRANSFER', body: transferWith('transaction_amount', 'NaN') },
  { name: 'transfer with 5 decimals', target: 'TRANSFER', body: transferWith('transaction_amount', 1.00001) },
  { name: 'transfer with 16 integer digits', target: 'TRANSFER', body: transferWith('transaction_amount', 1234567890123456) },
  {
    name: 'transfer with a number as destination_account_number',
    target: 'TRANSFER',
    body: (c) => transferWith('destination_account_number', Number(c.b))(c),
  },
  { name: 'transfer with an object as source_account_number', target: 'TRANSFER', body: transferWith('source_account_number', { a: 1 }) },
  { name: 'transfer with currency "XYZ"', target: 'TRANSFER', body: transferWith('currency', 'XYZ') },
  { name: 'transfer with a 100,000-character transaction_source', target: 'TRANSFER', body: transferWith('transaction_source', LONG) },
  {
    name: 'transfer with amount 1e400 as raw JSON',
    target: 'TRANSFER',
    body: (c) =>
      JSON.stringify({ ...transferBody(c.tenant, c.a, c.b, c.service, 10), transaction_amount: '__RAW__' }).replace('"__RAW__"', '1e400'),
  },
  { name: 'transfer with a null body', target: 'TRANSFER', body: () => 'null' },
  { name: 'transfer with invalid JSON', target: 'TRANSFER', body: () => '{"source_account_number":' },

  // client service create
  { name: 'service without client_service_name', target: 'SERVICE', body: serviceWith('client_service_name', undefined) },
  { name: 'service with a 100,000-character name', target: 'SERVICE', body: serviceWith('client_service_name', LONG) },
  { name: 'service with minimum "NaN"', target: 'SERVICE', body: serviceWith('minimum_transaction_amount', 'NaN') },
  { name: 'service with a negative maximum', target: 'SERVICE', body: serviceWith('maximum_transaction_amount', -5) },
  { name: 'service with a negative fee', target: 'SERVICE', body: serviceWith('transaction_fee', -1) },
  { name: 'service with a fee of 5 decimals', target: 'SERVICE', body: serviceWith('transaction_fee', 1.00001) },
  { name: 'service with has_transaction_fee "yes"', target: 'SERVICE', body: serviceWith('has_transaction_fee', 'yes') },
  { name: 'service with is_active 2', target: 'SERVICE', body: serviceWith('is_active', 2) },
  { name: 'service with is_active "1"', target: 'SERVICE', body: serviceWith('is_active', '1') },
  { name: 'service with an object as tiers', target: 'SERVICE', body: serviceWith('transaction_fee_tiers', { minimum_amount: 1 }) },
  {
    name: 'service with a malformed tier',
    target: 'SERVICE',
    body: serviceWith('transaction_fee_tiers', [{ minimum_amount: 1, maximum_amount: 'NaN', fee_type: 'X', fee: 1 }]),
  },
  { name: 'service with a null name', target: 'SERVICE', body: serviceWith('client_service_name', null) },
  {
    name: 'service with maximum 1e400 as raw JSON',
    target: 'SERVICE',
    body: (c) => JSON.stringify({ ...serviceBody(c.tenant), maximum_transaction_amount: '__RAW__' }).replace('"__RAW__"', '1e400'),
  },
  { name: 'service with an array body', target: 'SERVICE', body: (c) => JSON.stringify([serviceBody(c.tenant)]) },
  { name: 'service sent as text/plain', target: 'SERVICE', body: (c) => JSON.stringify(serviceBody(c.tenant)), contentType: 'text/plain' },

  // reversal
  { name: 'reversal with a number as source_transaction_id', target: 'REVERSE', body: () => ({ source_transaction_id: 123 }) },
  { name: 'reversal with an object as source_transaction_id', target: 'REVERSE', body: () => ({ source_transaction_id: { a: 1 } }) },
  { name: 'reversal with a 100,000-character narration', target: 'REVERSE', body: () => ({ transaction_narration: LONG }) },
  { name: 'reversal with a 100,000-character source_transaction_id', target: 'REVERSE', body: () => ({ source_transaction_id: LONG }) },
  { name: 'reversal with an array as narration', target: 'REVERSE', body: () => ({ transaction_narration: ['a'] }) },
  { name: 'reversal with an array body', target: 'REVERSE', body: () => '[1, 2]' },
  { name: 'reversal with invalid JSON', target: 'REVERSE', body: () => '{"transaction_narration": ' },
  { name: 'reversal sent as text/plain', target: 'REVERSE', body: () => 'reverse please', contentType: 'text/plain' },
];

describe('malformed bodies get a 4xx in the wallet error shape and move no money', () => {
  let app: NestFastifyApplication;
  let ctx: Ctx;
  let creditToReverse: string;

  beforeAll(async () => {
    app = await createTestApp();
    const tenant = await createTenant(app);
    const wallets = await walletSet(app, tenant);
    const a = await wallets.create();
    const b = await wallets.create();
    const service = await createService(app, tenant, { has_transaction_fee: true, transaction_fee_type: 'FIXED', transaction_fee: 1 });
    await fund(app, tenant, a, 1000);
    await fund(app, tenant, b, 500);
    ctx = { tenant, a, b, service };
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, a, service, 100)).expect(201);
    creditToReverse = credit.body.transaction_id;
  });
  afterAll(async () => app.close());

  async function snapshot() {
    const [services] = await dataSource(app).query('SELECT count(*)::int AS n FROM client_services WHERE client_id = $1', [
      ctx.tenant.clientId,
    ]);
    return {
      balances: await balances(app, [ctx.a, ctx.b]),
      footprint: await moneyFootprint(app, ctx.tenant.clientId),
      services: services.n,
    };
  }

  function send(c: Case) {
    const path = {
      CREDIT: '/api/v1/transactions?command=CREDIT',
      DEBIT: '/api/v1/transactions?command=DEBIT',
      TRANSFER: '/api/v1/account-transfers',
      SERVICE: '/api/v1/client-services',
      REVERSE: `/api/v1/transactions/${creditToReverse}?command=REVERSE`,
    }[c.target];
    const body = c.body(ctx);
    const req = http(app).post(path).set('authorization', ctx.tenant.auth);
    if (typeof body === 'string') return req.set('content-type', c.contentType ?? 'application/json').send(body);
    return req.send(body as object);
  }

  it('has at least 25 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(25);
  });

  it.each(CASES)('$name', async (c) => {
    const before = await snapshot();
    const res = await send(c);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).toEqual({ status: res.status, message: expect.anything(), code: 'HttpException' });
    const message = res.body.message;
    expect(
      typeof message === 'string' || (Array.isArray(message) && message.length > 0 && message.every((m: unknown) => typeof m === 'string')),
    ).toBe(true);
    // The answer must not echo a huge input back.
    expect(JSON.stringify(res.body).length).toBeLessThan(5000);
    expect(await snapshot()).toEqual(before);
  });

  it('after all that, the wallets are as funded and the credit is still reversible once', async () => {
    expect(await balances(app, [ctx.a, ctx.b])).toEqual(['1099.0000', '500.0000']);
    await http(app).post(`/api/v1/transactions/${creditToReverse}?command=REVERSE`).set('authorization', ctx.tenant.auth).expect(201);
    expect(await balances(app, [ctx.a, ctx.b])).toEqual(['1000.0000', '500.0000']);
  });
});
