import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { checkoutBody } from '../support/collections-fixtures';
import { chargeBody, createGatewayMerchant, GatewayMerchant, MerchantReceiver } from '../support/gateway-fixtures';
import { createService, fund, moneyBody, serviceBody, transferBody, walletSet } from '../support/money-fixtures';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';
import { profileBody } from '../support/wallet-fixtures';

const RUNS = 2_100;
const BATCH = 25;

interface Route {
  path: string;
  auth: 'wallet' | 'gateway' | 'none';
  /** A valid body, or null where only garbage is sent. */
  template: Record<string, unknown> | null;
  /** Required string fields: setting one to a non-string makes the body invalid whatever else it holds. */
  required: string[];
}

/** A value no required string field accepts. */
const notAString = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }),
);

/** Strings that have broken things before: NUL, lone surrogates, huge, SQL and path noise, odd dates. */
const nasty = fc.constantFrom(
  '\u0000',
  '\ud800',
  'a'.repeat(5000),
  "' OR 1=1 --",
  '../../etc/passwd',
  '2009-W01-1',
  '-'.repeat(36),
  '1e309',
  '-0',
  'NaN',
);

function bodies(route: Route): fc.Arbitrary<unknown> {
  const garbage = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(fc.jsonValue(), nasty), { maxKeys: 6 }));
  if (!route.template) return garbage;
  const template = route.template;
  const broken = fc
    .record({
      field: fc.constantFrom(...route.required),
      value: notAString,
      noise: fc.dictionary(fc.constantFrom(...Object.keys(template)), fc.oneof(fc.jsonValue(), nasty), { maxKeys: 3 }),
    })
    .map(({ field, value, noise }) => ({
      ...template,
      ...noise,
      [field]: value,
    }));
  return fc.oneof(garbage, broken, broken);
}

/**
 * Issue 11 tests: ~2,000 generated malformed bodies across every POST route of the wallet service and the
 * gateways (fixed seed, sent concurrently in small batches). None may answer 5xx, and no balance may move: the
 * tenants' ledger balances and journal entries are the same before and after.
 */
describe('fuzz: malformed bodies on every POST route', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let merchant: GatewayMerchant;
  let receiver: MerchantReceiver;
  let routes: Route[];

  beforeAll(async () => {
    app = await createTestApp();
    receiver = await new MerchantReceiver().start();
    tenant = await createTenant(app);
    const set = await walletSet(app, tenant);
    const [a, b] = [await set.create(), await set.create()];
    const service = await createService(app, tenant);
    await fund(app, tenant, a, 1000);
    merchant = await createGatewayMerchant(app);
    routes = [
      {
        path: '/api/v1/transactions?command=CREDIT',
        auth: 'wallet',
        template: moneyBody(tenant, a, service, 10),
        required: ['account_number', 'client_code', 'client_service_code', 'currency', 'source_transaction_id'],
      },
      {
        path: '/api/v1/transactions?command=DEBIT',
        auth: 'wallet',
        template: moneyBody(tenant, a, service, 10),
        required: ['account_number', 'client_code', 'client_service_code', 'currency', 'source_transaction_id'],
      },
      {
        path: '/api/v1/account-transfers',
        auth: 'wallet',
        template: transferBody(tenant, a, b, service, 10),
        required: ['source_account_number', 'destination_account_number', 'client_code', 'currency', 'source_transaction_id'],
      },
      {
        path: `/api/v1/transactions/${randomUUID()}?command=REVERSE`,
        auth: 'wallet',
        template: null,
        required: [],
      },
      {
        path: '/api/v1/profiles',
        auth: 'wallet',
        template: profileBody(tenant),
        required: ['profile_email', 'client_code'],
      },
      {
        path: '/api/v1/account-types',
        auth: 'wallet',
        template: { client_code: tenant.clientCode, account_type_name: 'Fuzz' },
        required: ['client_code', 'account_type_name'],
      },
      {
        path: '/api/v1/accounts',
        auth: 'wallet',
        template: {
          client_code: tenant.clientCode,
          client_profile_id: set.clientProfileId,
          account_type_code: set.accountTypeCode,
          account_name: 'Fuzz',
          currency: 'KES',
        },
        required: ['client_code', 'client_profile_id', 'account_type_code'],
      },
      {
        path: '/api/v1/client-services',
        auth: 'wallet',
        template: serviceBody(tenant),
        required: ['client_code', 'client_service_name'],
      },
      {
        path: '/api/v1/auth/login',
        auth: 'none',
        template: { username: tenant.username, password: 'wrong password' },
        required: ['username', 'password'],
      },
      {
        path: '/v1/auth',
        auth: 'none',
        template: {
          consumer_key: merchant.consumerKey,
          consumer_secret: 'wrong',
        },
        required: ['consumer_key', 'consumer_secret'],
      },
      {
        path: '/v1/mobile-money/charge',
        auth: 'gateway',
        template: chargeBody(merchant, { callback_url: receiver.url() }),
        required: ['external_reference', 'client_code', 'service_code', 'payer_msisdn'],
      },
      {
        path: '/v1/mobile-money/verify-otp',
        auth: 'gateway',
        template: null,
        required: [],
      },
      {
        path: '/v2/checkout/initiate',
        auth: 'gateway',
        template: checkoutBody(merchant, receiver),
        required: ['merchant_transaction_id', 'service_code', 'payer_email'],
      },
      {
        path: '/v1/reversals/initiate',
        auth: 'gateway',
        template: null,
        required: [],
      },
      { path: '/v1/statement', auth: 'gateway', template: null, required: [] },
      {
        path: '/transactions/acknowledge',
        auth: 'gateway',
        template: null,
        required: [],
      },
      {
        path: `/checkout/${randomUUID()}/pay`,
        auth: 'none',
        template: null,
        required: [],
      },
    ];
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  async function footprint() {
    return dataSource(app).query(
      `SELECT (SELECT coalesce(json_agg(json_build_object('id', id, 'balance', balance) ORDER BY id), '[]') FROM ledger_accounts WHERE client_id = ANY($1)) AS balances,
              (SELECT count(*)::int FROM journal_entries WHERE client_id = ANY($1)) AS entries,
              (SELECT count(*)::int FROM payments WHERE client_id = ANY($1)) AS payments`,
      [[tenant.clientId, merchant.clientId]],
    );
  }

  it(`${RUNS} malformed bodies: no 5xx, nothing moves`, async () => {
    const before = await footprint();
    const cases = fc.sample(
      fc.integer({ min: 0, max: routes.length - 1 }).chain((i) => bodies(routes[i]).map((body) => ({ route: routes[i], body }))),
      { numRuns: RUNS, seed: 20261122 },
    );
    const failures: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < cases.length; i += BATCH) {
      await Promise.all(
        cases.slice(i, i + BATCH).map(async ({ route, body }) => {
          seen.add(route.path);
          const headers: Record<string, string> = {
            'content-type': 'application/json',
          };
          if (route.auth === 'wallet') headers.authorization = tenant.auth;
          if (route.auth === 'gateway') headers['x-access-token'] = merchant.token;
          const res = await app.inject({
            method: 'POST',
            url: route.path,
            headers,
            payload: JSON.stringify(body) ?? 'null',
          });
          if (res.statusCode >= 500 || res.statusCode < 400)
            failures.push(`${route.path} ${res.statusCode} ${JSON.stringify(body).slice(0, 300)} -> ${res.body.slice(0, 200)}`);
        }),
      );
    }
    expect(failures).toEqual([]);
    expect(seen.size).toBe(routes.length);
    expect(await footprint()).toEqual(before);
  }, 120_000);
});
