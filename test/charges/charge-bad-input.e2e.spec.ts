import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { chargeBody, createGatewayMerchant, GatewayMerchant, paymentCount } from '../support/gateway-fixtures';
import { createTestApp } from '../support/test-app';

const REQUIRED_FIELDS = [
  'external_reference',
  'client_code',
  'origin_channel_code',
  'originator_msisdn',
  'payer_msisdn',
  'payer_email',
  'service_code',
  'account_number',
  'invoice_number',
  'currency_code',
  'country_code',
  'amount',
  'add_transaction_charge',
  'transaction_charge',
  'payment_method_code',
  'extra_data',
  'description',
  'notify_client',
  'notify_originator',
  'callback_url',
] as const;

/** The status_code the collection document gives a missing field: 109 and 115 have codes of their own. */
const MISSING_CODE: Partial<Record<(typeof REQUIRED_FIELDS)[number], number[]>> = {
  payer_msisdn: [109],
  currency_code: [115],
  // The originator is not the customer; either the generic code or "invalid msisdn" is a fair reading.
  originator_msisdn: [172, 110],
};

/**
 * Malformed charge and OTP requests (collection document §2, §7; provider contract §5, §10 "Limits on strings"):
 * every one is a 4xx in the gateway error shape, never a 5xx, and writes no payment.
 */
describe('charge and OTP requests with bad input', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
  });
  afterAll(async () => app.close());

  function expectGatewayError(res: request.Response, status: number | 'any4xx', codes?: number[]) {
    if (status === 'any4xx') {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    } else {
      expect(res.status).toBe(status);
    }
    expect(res.body).toEqual({ status_code: expect.any(Number), status_description: expect.any(String), message: expect.any(String) });
    expect(res.body.message.length).toBeGreaterThan(0);
    if (codes) expect(codes).toContain(res.body.status_code);
  }

  const charge = () => request(app.getHttpServer()).post('/v1/mobile-money/charge').set('x-access-token', merchant.token);

  afterEach(async () => {
    // Whatever was sent, no payment was written for either client.
    expect(await paymentCount(app, merchant.clientId)).toBe(0);
    expect(await paymentCount(app, other.clientId)).toBe(0);
  });

  describe('charge: a missing required field', () => {
    it.each(REQUIRED_FIELDS.map((f) => [f]))('without %s → 400', async (field) => {
      const body = chargeBody(merchant);
      delete body[field];
      const res = await charge().send(body);
      expectGatewayError(res, 400, MISSING_CODE[field] ?? [172]);
      if (field === 'payer_msisdn') expect(res.body.status_description).toMatch(/msisdn/i);
    });

    it.each(REQUIRED_FIELDS.map((f) => [f]))('%s: null → 400', async (field) => {
      const res = await charge().send(chargeBody(merchant, { [field]: null }));
      expectGatewayError(res, 400, MISSING_CODE[field] ?? [172]);
    });
  });

  const B = (overrides: Record<string, unknown>) => () => chargeBody(merchant, overrides);

  describe('charge: wrong types, bad values, over-long strings', () => {
    it.each<[string, () => Record<string, unknown>, number[]]>([
      // wrong types
      ['amount as a boolean', B({ amount: true }), [172]],
      ['amount as an object', B({ amount: { value: 100 } }), [172]],
      ['amount not a number', B({ amount: 'abc' }), [172]],
      ['amount zero', B({ amount: 0 }), [172]],
      ['amount negative', B({ amount: -5 }), [172]],
      ['amount with 5 decimals', B({ amount: '1.00001' }), [172]],
      ['amount with 16 integer digits', B({ amount: '1234567890123456' }), [172]],
      ['amount NaN as a string', B({ amount: 'NaN' }), [172]],
      ['amount Infinity as a string', B({ amount: 'Infinity' }), [172]],
      ['transaction_charge negative', B({ add_transaction_charge: true, transaction_charge: -1 }), [172]],
      ['transaction_charge as a boolean', B({ transaction_charge: false }), [172]],
      ['add_transaction_charge as a string', B({ add_transaction_charge: 'true' }), [172]],
      ['notify_client as a number', B({ notify_client: 1 }), [172]],
      ['notify_originator as a string', B({ notify_originator: 'false' }), [172]],
      ['external_reference as a number', B({ external_reference: 12345 }), [172]],
      ['external_reference empty', B({ external_reference: '' }), [172]],
      ['extra_data as a string', B({ extra_data: 'x' }), [172]],
      ['extra_data as an array', B({ extra_data: [1, 2] }), [172]],
      ['extra_data over 8 KiB', B({ extra_data: { blob: 'x'.repeat(9000) } }), [172]],
      ['description as an array', B({ description: ['a'] }), [172]],
      ['service_code as a number', B({ service_code: 7 }), [172]],
      ['origin_channel_code not API/WEB/USSD/APP', B({ origin_channel_code: 'FAX' }), [172]],
      ['origin_channel_code lower case', B({ origin_channel_code: 'api' }), [172]],
      ['country_code of two letters', B({ country_code: 'KE' }), [172]],
      ['payer_email not an email', B({ payer_email: 'not-an-email' }), [172]],
      ['a NUL character in a string', B({ description: 'a\u0000b' }), [172]],
      // over-long strings
      ['external_reference of 65 characters', B({ external_reference: 'r'.repeat(65) }), [172]],
      ['client_code of 33 characters', B({ client_code: 'C'.repeat(33) }), [172]],
      ['service_code of 33 characters', B({ service_code: 'S'.repeat(33) }), [172]],
      ['payer_name of 101 characters', B({ payer_name: 'n'.repeat(101) }), [172]],
      ['payer_email of 101 characters', B({ payer_email: `${'e'.repeat(90)}@example.com` }), [172]],
      ['account_number of 51 characters', B({ account_number: 'a'.repeat(51) }), [172]],
      ['invoice_number of 51 characters', B({ invoice_number: 'i'.repeat(51) }), [172]],
      ['description of 256 characters', B({ description: 'd'.repeat(256) }), [172]],
      ['payment_method_code of 33 characters', B({ payment_method_code: 'M'.repeat(33) }), [172]],
      ['callback_url of 501 characters', B({ callback_url: `https://merchant.example/${'p'.repeat(480)}` }), [172]],
      // currency → 115
      ['an unknown currency', B({ currency_code: 'XYZ' }), [115]],
      ['a lower-case currency', B({ currency_code: 'kes' }), [115]],
      ['a currency as a number', B({ currency_code: 404 }), [115]],
      ['a currency the service does not collect in', B({ currency_code: 'USD' }), [115]],
      // payer msisdn → 110
      ['payer_msisdn with letters', B({ payer_msisdn: '2547ABC45678' }), [110]],
      ['payer_msisdn with dashes', B({ payer_msisdn: '254-712-345-678' }), [110]],
      ['payer_msisdn of 26 digits', B({ payer_msisdn: '2'.repeat(26) }), [110]],
      ['payer_msisdn as a number', B({ payer_msisdn: 254712345678 }), [110, 109]],
      ['payer_msisdn too short', B({ payer_msisdn: '12' }), [110]],
      // callback_url
      ['callback_url over http to a public host', B({ callback_url: 'http://merchant.example.com/cb' }), [172]],
      ['callback_url over http to a private address', B({ callback_url: 'http://10.0.0.5/cb' }), [172]],
      ['callback_url with another scheme', B({ callback_url: 'ftp://merchant.example.com/cb' }), [172]],
      ['callback_url not a URL', B({ callback_url: 'merchant callback' }), [172]],
      ['callback_url carrying credentials', B({ callback_url: 'https://user:pass@merchant.example.com/cb' }), [172]],
      ['callback_url javascript:', B({ callback_url: 'javascript:alert(1)' }), [172]],
      // service
      ['an unknown service code', B({ service_code: 'NO_SUCH_SERVICE' }), [172]],
      ['amount above the service maximum', B({ amount: 1_000_001 }), [172]],
      ['amount below the service minimum', B({ amount: '0.5' }), [172]],
      ['amount not above the merchant-borne fee', B({ amount: 10 }), [172]],
    ])('%s → 400', async (_name, body, codes) => {
      const res = await charge().send(body());
      expectGatewayError(res, 400, codes);
    });

    it("another client's service code → 400 with 172, as an unknown one", async () => {
      const res = await charge().send(chargeBody(merchant, { service_code: other.serviceCode }));
      expectGatewayError(res, 400, [172]);
    });

    it('an inactive service → 400 with 172', async () => {
      const inactive = await request(app.getHttpServer())
        .post('/api/v1/client-services')
        .set('authorization', merchant.tenant.auth)
        .send({
          client_code: merchant.clientCode,
          client_service_name: 'Dormant service',
          service_code: 'CUSTOM_SERVICE',
          has_transaction_fee: false,
          minimum_transaction_amount: 1,
          maximum_transaction_amount: 1000,
          is_active: 0,
        })
        .expect(201);
      const res = await charge().send(chargeBody(merchant, { service_code: inactive.body.client_service_code }));
      expectGatewayError(res, 400, [172]);
    });

    it('a service without a settlement wallet → 400, nothing accepted', async () => {
      const bare = await request(app.getHttpServer())
        .post('/api/v1/client-services')
        .set('authorization', merchant.tenant.auth)
        .send({
          client_code: merchant.clientCode,
          client_service_name: 'No wallet',
          service_code: 'CUSTOM_SERVICE',
          has_transaction_fee: false,
          minimum_transaction_amount: 1,
          maximum_transaction_amount: 1000,
          is_active: 1,
        })
        .expect(201);
      const res = await charge().send(chargeBody(merchant, { service_code: bare.body.client_service_code }));
      expectGatewayError(res, 'any4xx');
    });
  });

  describe('charge: bodies that are not a JSON object', () => {
    it.each<[string, (r: request.Test) => request.Test]>([
      ['JSON null', (r) => r.set('content-type', 'application/json').send('null')],
      ['a JSON array', (r) => r.set('content-type', 'application/json').send('[]')],
      ['an array of charges', (r) => r.send([chargeBody(merchant)])],
      ['a JSON number', (r) => r.set('content-type', 'application/json').send('42')],
      ['a JSON string', (r) => r.set('content-type', 'application/json').send('"charge"')],
      ['invalid JSON', (r) => r.set('content-type', 'application/json').send('{"external_reference": "x",')],
      ['an empty JSON body', (r) => r.set('content-type', 'application/json').send('')],
      ['text/plain', (r) => r.set('content-type', 'text/plain').send(JSON.stringify(chargeBody(merchant)))],
      ['form-urlencoded', (r) => r.type('form').send(new URLSearchParams(chargeBody(merchant) as Record<string, string>).toString())],
      ['XML', (r) => r.set('content-type', 'application/xml').send('<charge/>')],
      ['no body at all', (r) => r],
    ])('%s → 4xx in the gateway shape', async (_name, send) => {
      const res = await send(charge());
      expectGatewayError(res, 'any4xx');
    });

    it('a body over the size limit → 4xx in the gateway shape', async () => {
      const res = await charge().send(chargeBody(merchant, { description: 'x'.repeat(1_100_000) }));
      expectGatewayError(res, 'any4xx');
    });
  });

  describe('OTP verification: malformed bodies', () => {
    const otp = () => request(app.getHttpServer()).post('/v1/mobile-money/verify-otp').set('x-access-token', merchant.token);

    it.each<[string, (r: request.Test) => request.Test]>([
      ['an empty object', (r) => r.send({})],
      ['reference only', (r) => r.send({ reference: 'ext-1' })],
      ['otp only', (r) => r.send({ otp: '123456' })],
      ['null values', (r) => r.send({ reference: null, otp: null })],
      ['numbers', (r) => r.send({ reference: 123, otp: 123456 })],
      ['arrays', (r) => r.send({ reference: ['ext-1'], otp: ['123456'] })],
      ['objects', (r) => r.send({ reference: { $ne: '' }, otp: { $ne: '' } })],
      ['an array body', (r) => r.send([{ reference: 'ext-1', otp: '123456' }])],
      ['JSON null', (r) => r.set('content-type', 'application/json').send('null')],
      ['invalid JSON', (r) => r.set('content-type', 'application/json').send('{"reference":')],
      ['no body', (r) => r],
    ])('%s → 400 with status_code 172', async (_name, send) => {
      const res = await send(otp());
      expectGatewayError(res, 400, [172]);
    });

    it.each<[string, (r: request.Test) => request.Test]>([
      ['text/plain', (r) => r.set('content-type', 'text/plain').send('reference=x&otp=1')],
      ['an over-long reference', (r) => r.send({ reference: 'r'.repeat(10_000), otp: '123456' })],
      ['a NUL character', (r) => r.send({ reference: 'a\u0000b', otp: '123456' })],
    ])('%s → 4xx in the gateway shape', async (_name, send) => {
      const res = await send(otp());
      expectGatewayError(res, 'any4xx');
    });
  });

  describe('status and callback-log lookups with odd input', () => {
    it.each(['0', '99999999999999999999999', "1'%20OR%201=1", '%00', 'x'.repeat(90)])('GET /v1/transaction/%s/status → 404', async (id) => {
      const res = await request(app.getHttpServer()).get(`/v1/transaction/${id}/status`).set('x-access-token', merchant.token);
      expectGatewayError(res, 'any4xx');
    });

    it('GET /v1/callbacks without a reference → 400 in the gateway shape', async () => {
      const res = await request(app.getHttpServer()).get('/v1/callbacks').set('x-access-token', merchant.token);
      expectGatewayError(res, 400, [172]);
    });
  });
});
