import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { b2bBody, createPayoutMerchant, imtBody, mobilePayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { checkoutBody } from '../support/collections-fixtures';
import { createService, fund, moneyBody, transferBody, walletSet } from '../support/money-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/** Stands in for the raw JSON number text in a body built as an object. */
const MARK = '§AMOUNT§';

/** The body's JSON text with the marked value replaced by `number`, written as a JSON number exactly as given. */
function withNumber(body: Record<string, unknown>, number: string): string {
  return JSON.stringify(body).replace(`"${MARK}"`, number);
}

/**
 * Issue 22 item 4: money is parsed from the JSON text of the number, so "more than 4 decimals → 400" (provider
 * contract §3) holds on every money route even where a double would round the number to an acceptable one, and
 * nothing is stored. Invalid UTF-8 is a 400, and an OTP longer than any OTP is a 400 that costs no attempt.
 */
describe('money numbers are read exactly', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let routes: Array<{ name: string; path: string; body: Record<string, unknown>; accepted: number; refusal: object }>;
  let wallet: string;
  let service: string;
  let auth: string;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createPayoutMerchant(app);
    const tenant = merchant.tenant;
    auth = tenant.auth;
    const wallets = await walletSet(app, tenant);
    service = await createService(app, tenant);
    wallet = await wallets.create();
    const other = await wallets.create();
    await fund(app, tenant, wallet, 1_000_000);
    const walletRefusal = { status: 400, message: [expect.stringMatching(/transaction_amount/)], code: 'HttpException' };
    const gatewayRefusal = { status_code: 172, status_description: 'Validation Failed' };
    const payoutRefusal = { response_code: 721, error_code: 'VALIDATION_FAILED' };
    routes = [
      {
        name: 'credit',
        path: '/api/v1/transactions?command=CREDIT',
        body: moneyBody(tenant, wallet, service, MARK),
        accepted: 201,
        refusal: walletRefusal,
      },
      {
        name: 'debit',
        path: '/api/v1/transactions?command=DEBIT',
        body: moneyBody(tenant, wallet, service, MARK),
        accepted: 201,
        refusal: walletRefusal,
      },
      {
        name: 'transfer',
        path: '/api/v1/account-transfers',
        body: transferBody(tenant, wallet, other, service, MARK),
        accepted: 201,
        refusal: walletRefusal,
      },
      {
        name: 'charge amount',
        path: '/v1/mobile-money/charge',
        body: chargeBody(merchant, { amount: MARK }),
        accepted: 200,
        refusal: gatewayRefusal,
      },
      {
        name: 'charge transaction_charge',
        path: '/v1/mobile-money/charge',
        body: chargeBody(merchant, { add_transaction_charge: true, transaction_charge: MARK }),
        accepted: 200,
        refusal: gatewayRefusal,
      },
      {
        name: 'split settlement (paid on acknowledgement)',
        path: '/v1/mobile-money/charge',
        body: chargeBody(merchant, { extra_data: { split_settlements: [{ account: other, amount: MARK, reason: 'Partner' }] } }),
        accepted: 200,
        refusal: gatewayRefusal,
      },
      {
        name: 'checkout',
        path: '/v2/checkout/initiate',
        body: checkoutBody(merchant, { url: (path = '/cb') => `https://merchant.example.com${path}` }, { amount: MARK }),
        accepted: 200,
        refusal: { status_code: 172, status_description: 'Validation Failed' },
      },
      {
        name: 'payout',
        path: PAYOUT_PATHS.local,
        body: mobilePayoutBody(merchant, 'ok', { sender_amount: MARK, recipient_amount: '100' }),
        accepted: 200,
        refusal: payoutRefusal,
      },
      { name: 'IMT', path: PAYOUT_PATHS.imt, body: imtBody(merchant, { sender_amount: MARK }), accepted: 200, refusal: payoutRefusal },
      { name: 'B2B', path: PAYOUT_PATHS.b2b, body: b2bBody(merchant, { amount: MARK }), accepted: 200, refusal: payoutRefusal },
      {
        name: 'airtime',
        path: '/v1/gw/airtime/send',
        body: {
          reference: 'air-numbers',
          service_code: merchant.serviceCode,
          recipients: [{ phone_number: '254712345678', amount: MARK }],
        },
        accepted: 200,
        refusal: { response_code: 721, error_code: 'VALIDATION_FAILED', message: expect.stringMatching(/amount/) },
      },
    ];
  });
  afterAll(async () => app.close());

  function send(route: (typeof routes)[number], body: string) {
    const call = request(app.getHttpServer()).post(route.path).set('content-type', 'application/json');
    return (route.path.startsWith('/api/') ? call.set('authorization', auth) : call.set('x-access-token', merchant.token)).send(body);
  }

  /** Everything a money request of the client could have stored. */
  async function footprint(): Promise<Record<string, number>> {
    const [row] = await dataSource(app).query(
      `SELECT (SELECT count(*) FROM journal_entries WHERE client_id = $1)::int AS entries,
              (SELECT count(*) FROM wallet_transactions WHERE client_id = $1)::int AS records,
              (SELECT count(*) FROM payments WHERE client_id = $1)::int AS payments,
              (SELECT count(*) FROM checkout_sessions WHERE client_id = $1)::int AS checkouts,
              (SELECT count(*) FROM payouts WHERE client_id = $1)::int AS payouts,
              (SELECT count(*) FROM airtime_requests WHERE client_id = $1)::int AS airtime`,
      [merchant.clientId],
    );
    return row;
  }

  // Each of these is a number a double rounds to an acceptable amount (or to Infinity); each has more than 4 decimals
  // or is not a finite amount, so each is a 400 however it is written.
  const REFUSED = ['1.0000000000000001', '100.00000000000000001', '100.000010000000000001', '1e400', '1000.00000000000000000001e0'];

  it.each(REFUSED)('%s as a JSON number: 400 in the route’s shape on every money route, nothing stored', async (number) => {
    for (const route of routes) {
      const before = await footprint();
      const res = await send(route, withNumber(route.body, number));
      expect({ route: route.name, status: res.status }).toEqual({ route: route.name, status: 400 });
      expect(res.body).toMatchObject(route.refusal);
      expect(await footprint()).toEqual(before);
    }
  });

  it('the same routes accept an exact JSON number (each body is otherwise valid)', async () => {
    for (const route of routes) {
      const body = withNumber({ ...route.body, ...fresh(route.name) }, route.name === 'IMT' ? '1000.00' : '100');
      const res = await send(route, body);
      expect({ route: route.name, status: res.status, body: res.body }).toMatchObject({ route: route.name, status: route.accepted });
    }
  });

  it('a body that is not UTF-8 is a 400, not text with U+FFFD stored', async () => {
    const before = await footprint();
    const [head, tail] = JSON.stringify(moneyBody(merchant.tenant, wallet, service, 100, { transaction_narration: 'caf#' })).split('#');
    // Latin-1 é: not UTF-8.
    const body = Buffer.concat([Buffer.from(head), Buffer.from([0xe9]), Buffer.from(tail)]);
    const res = await request(app.getHttpServer())
      .post('/api/v1/transactions?command=CREDIT')
      .set('authorization', auth)
      .set('content-type', 'application/json')
      .serialize((raw: Buffer) => raw as unknown as string)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 400, message: 'Request body is not valid UTF-8', code: 'HttpException' });
    expect(await footprint()).toEqual(before);
  });

  it('an OTP of 10,000 characters is a 400 and costs no attempt', async () => {
    const otpMerchant = await createGatewayMerchant(app);
    const charge = chargeBody(otpMerchant, { payer_msisdn: '254700000004' });
    expect((await gateway(app, otpMerchant.token).post('/v1/mobile-money/charge').send(charge)).body.next_step).toBe('VERIFY_OTP');
    const verify = (otp: string) =>
      gateway(app, otpMerchant.token).post('/v1/mobile-money/verify-otp').send({ reference: charge.external_reference, otp });
    const long = await verify('1'.repeat(10_000));
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ status_code: 172, status_description: 'Both reference and otp are required', message: expect.any(String) });
    // The first wrong OTP still leaves three attempts: the long one was not counted.
    expect((await verify('111111')).body).toMatchObject({ status: 'OTP_INVALID', description: expect.stringMatching(/\b3\b.*attempt/i) });
  });
});

/** A new idempotency reference for a route's body, so the accepted requests do not replay each other. */
function fresh(name: string): Record<string, unknown> {
  const id = `${name.replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2)}`;
  if (name === 'credit' || name === 'debit' || name === 'transfer') return { source_transaction_id: id };
  if (name.startsWith('charge') || name.startsWith('split')) return { external_reference: id };
  if (name === 'checkout') return { merchant_transaction_id: id };
  if (name === 'airtime') return { reference: id };
  return { payout_reference: id };
}
