import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createGatewayMerchant, gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * Validation at the boundary: every body is a DTO, and each interface answers its failures in its own shape —
 * the gateway's codes come from the failed rule (109/110 payer msisdn, 115 currency, 172 otherwise), the payment
 * statement has a body of its own, the payer's page shows one message, and the wallet lists every message.
 */
describe('error shapes per interface', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => app.close());

  const gw = () => gateway(app, merchant.token);
  const checkout = (overrides: Record<string, unknown>) => ({
    merchant_transaction_id: `mtx-${Date.now()}-${Math.random()}`,
    amount: 1500,
    payer_name: 'Jane Payer',
    payer_email: 'jane.payer@example.com',
    payer_msisdn: '254712345678',
    service_code: merchant.serviceCode,
    account_number: 'ACC-1',
    expires_in: 60,
    narration: 'Order 42',
    callback_url: 'https://merchant.invalid/callback',
    redirect_url: 'https://merchant.invalid/thanks',
    ...overrides,
  });

  it.each<[string, Record<string, unknown>, number, string]>([
    ['a missing payer_msisdn', { payer_msisdn: undefined }, 109, 'Customer msisdn missing'],
    ['a payer_msisdn that is not a string', { payer_msisdn: 254712345678 }, 109, 'Customer msisdn missing'],
    ['a malformed payer_msisdn', { payer_msisdn: '25471-234' }, 110, 'Invalid customer msisdn'],
    ['an over-long payer_msisdn', { payer_msisdn: '2'.repeat(26) }, 110, 'Invalid customer msisdn'],
    ['another bad field', { expires_in: 0 }, 172, 'Validation Failed'],
  ])('checkout initiate with %s → %s from the rule that failed', async (_name, overrides, code, description) => {
    const res = await gw().post('/v2/checkout/initiate').send(checkout(overrides));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status_code: code, status_description: description, message: expect.any(String) });
  });

  it('a body breaking several rules: the first field decides the code, the message names each field once', async () => {
    const res = await gw().post('/transactions/acknowledge').send({ payment_id: 'x', status: 'MAYBE', narration: 5 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status_code: 172,
      status_description: 'Validation Failed',
      message: 'payment_id is required; status must be SUCCESSFUL or FAILED; narration must be a string of at most 255 characters',
    });
    const otp = await gw().post('/v1/mobile-money/verify-otp').send({});
    expect(otp.body).toEqual({
      status_code: 172,
      status_description: 'Both reference and otp are required',
      message: 'Both reference and otp are required',
    });
  });

  it('collection reversal failures echo the reversal_reference, or "" when it is not a string', async () => {
    const initiate = (body: Record<string, unknown>) => gw().post('/v1/reversals/initiate').send(body);
    const named = await initiate({ reversal_reference: 'rev-1', payment_reference: 'p', reversal_reason: ' ' });
    expect(named.body).toEqual({
      status_code: 172,
      status_description: 'Validation Failed',
      message: 'reversal_reason is required (at most 255 characters)',
      reference: 'rev-1',
    });
    const unnamed = await initiate({ reversal_reference: 7, payment_reference: 'p', reversal_reason: 'r' });
    expect(unnamed.body).toMatchObject({
      status_code: 172,
      message: 'reversal_reference is required (at most 64 characters)',
      reference: '',
    });
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM collection_reversals WHERE client_id = $1`, [
      merchant.clientId,
    ]);
    expect(n).toBe(0);
  });

  it('payment statement: its own shape for its validation errors, the first failed rule in field order', async () => {
    const statement = (body: Record<string, unknown>) => gw().post('/v1/statement').send(body);
    expect((await statement({ start_date: '2025-02-30', end_date: 'x', limit: 0 })).body).toEqual({
      response_code: 400,
      response_description: 'start_date is required as an ISO 8601 date',
      error_code: 'INVALID_DATE',
    });
    expect((await statement({ start_date: '2025-02-01', end_date: '2025-01-31', limit: 0 })).body).toEqual({
      response_code: 400,
      response_description: 'end_date must not be before start_date',
      error_code: 'INVALID_DATE_RANGE',
    });
    expect((await statement({ start_date: '2025-01-31', end_date: '2025-01-31', limit: 1001 })).body).toEqual({
      response_code: 400,
      response_description: 'limit must be an integer from 1 to 1000',
      error_code: 'INVALID_PAGINATION',
    });
    // Not a validation error: the statement answers like any gateway route.
    const unauthorised = await request(app.getHttpServer()).post('/v1/statement').send({});
    expect(unauthorised.status).toBe(401);
    expect(unauthorised.body).toEqual({ statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' });
  });

  it("the payer's pay endpoint answers one message a page can show; the wallet lists them all", async () => {
    const session = await gw().post('/v2/checkout/initiate').send(checkout({}));
    expect(session.status).toBe(200);
    const pay = await request(app.getHttpServer()).post(`/checkout/${session.body.checkout_reference}/pay`).send({ msisdn: 12 });
    expect(pay.status).toBe(400);
    expect(pay.body).toEqual({ statusCode: 400, message: 'Enter a phone number with its country code, digits only', error: 'Bad Request' });
    // Refused before validation (a NUL anywhere) or before the route runs (a key JSON parsing refuses): the same shape.
    const payRaw = (body: string) =>
      request(app.getHttpServer())
        .post(`/checkout/${session.body.checkout_reference}/pay`)
        .set('content-type', 'application/json')
        .send(body);
    expect((await payRaw('{"phone_number":"2547\\u00001"}')).body).toEqual({
      statusCode: 400,
      message: 'phone_number must not contain NUL characters',
      error: 'Bad Request',
    });
    const unreadable = await payRaw('{"__proto__":{"x":1}}');
    expect(unreadable.status).toBe(400);
    expect(unreadable.body).toEqual({ statusCode: 400, message: expect.any(String), error: 'Bad Request' });

    const login = await request(app.getHttpServer()).post('/api/v1/auth/login').send({ username: 5, password: 6 });
    expect(login.status).toBe(400);
    expect(login.body).toEqual({
      status: 400,
      message: expect.arrayContaining([expect.stringMatching(/^username/), expect.stringMatching(/^password/)]),
      code: 'HttpException',
    });
  });

  it('errors that reach no controller keep the shape of the path they were sent to', async () => {
    expect((await gw().get('/v1/no-such-route')).body).toMatchObject({ status_code: 120 });
    expect((await request(app.getHttpServer()).get('/api/v1/no-such-route')).body).toMatchObject({ status: 404, code: 'HttpException' });
  });

  // Issue 22 item 3: a body refused before the route runs (not JSON, too large) has the route family's own shape.
  const huge = JSON.stringify({ padding: 'x'.repeat(1_100_000) });
  it.each<[string, string, (status: number) => unknown]>([
    [
      '/v1/statement',
      'statement',
      (status) => ({ response_code: status, response_description: expect.any(String), error_code: 'INVALID_REQUEST' }),
    ],
    [
      '/v1/gw/airtime/send',
      'airtime',
      () => ({
        reference: null,
        response_code: 721,
        response_description: 'Validation Failed',
        error_code: 'VALIDATION_FAILED',
        message: expect.any(String),
      }),
    ],
    [
      '/v1/payouts/initiate',
      'payout',
      () => ({ response_code: 721, response_description: expect.stringMatching(/^Validation Failed/), error_code: 'VALIDATION_FAILED' }),
    ],
    [
      '/checkout/some-reference/pay',
      'hosted page',
      (status) => ({ statusCode: status, message: expect.any(String), error: expect.any(String) }),
    ],
  ])('%s: invalid JSON (400) and an over-large body (413) in the %s shape', async (path, _shape, body) => {
    const badJson = await gw().post(path).set('content-type', 'application/json').send('{"start_date":');
    expect(badJson.status).toBe(400);
    expect(badJson.body).toEqual(body(400));
    const tooLarge = await gw().post(path).set('content-type', 'application/json').send(huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual(body(413));
  });
});
