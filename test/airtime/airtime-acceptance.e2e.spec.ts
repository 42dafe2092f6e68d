import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import {
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  airtimeStatus,
  airtimeStored,
  createAirtimeMerchant,
  sendAirtime,
} from '../support/airtime-fixtures';
import { fundFloat } from '../support/disbursement-fixtures';
import { createTestApp } from '../support/test-app';

const OK = { phone_number: '254712345678', amount: '50' };

/** n distinct, valid recipients (numbers that succeed in the sandbox). */
function recipients(n: number, amount: unknown = '1'): Array<{ phone_number: string; amount: unknown }> {
  return Array.from({ length: n }, (_, i) => ({ phone_number: `2547${String(10_000_000 + i)}`, amount }));
}

/**
 * Acceptance of bulk airtime (disbursement document "Airtime", §7, §8; provider contract §3, §5, §10): the whole
 * request is validated before anything is stored, a reference is accepted once (also under concurrency), and the
 * float must cover every recipient's amount and fee. No workers run here: only what acceptance does is observed.
 */
describe('bulk airtime acceptance', () => {
  let app: NestFastifyApplication;
  let merchant: AirtimeMerchant;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createAirtimeMerchant(app, null);
  });
  afterAll(async () => app?.close());

  describe('a malformed request is refused whole with 721 Validation Failed and stores nothing', () => {
    const cases: Array<[string, Record<string, unknown>, 'VALIDATION_FAILED' | 'INVALID_PHONE_NUMBER']> = [
      ['no recipients', { recipients: [] }, 'VALIDATION_FAILED'],
      ['1001 recipients', { recipients: recipients(1001) }, 'VALIDATION_FAILED'],
      ['recipients missing', { recipients: undefined }, 'VALIDATION_FAILED'],
      ['recipients not an array', { recipients: { phone_number: '254712345678', amount: '5' } }, 'VALIDATION_FAILED'],
      ['a recipient that is not an object', { recipients: [OK, '254712345679'] }, 'VALIDATION_FAILED'],
      ['a null recipient', { recipients: [OK, null] }, 'VALIDATION_FAILED'],
      ['a number with a leading 0', { recipients: [{ phone_number: '0712345678', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number with letters', { recipients: [{ phone_number: '2547123ABC78', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number with spaces', { recipients: [{ phone_number: '254 712 345 678', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number of 16 digits', { recipients: [{ phone_number: '2547123456789012', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number of 7 digits', { recipients: [{ phone_number: '2547123', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number with two +', { recipients: [{ phone_number: '++254712345678', amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a number sent as a JSON number', { recipients: [{ phone_number: 254712345678, amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      ['a missing number', { recipients: [{ amount: '5' }] }, 'INVALID_PHONE_NUMBER'],
      [
        'the same number twice (with and without +)',
        { recipients: [OK, { ...OK, phone_number: `+${OK.phone_number}` }] },
        'INVALID_PHONE_NUMBER',
      ],
      ['a zero amount', { recipients: [{ ...OK, amount: 0 }] }, 'VALIDATION_FAILED'],
      ['a zero amount string', { recipients: [{ ...OK, amount: '0.0000' }] }, 'VALIDATION_FAILED'],
      ['a negative amount', { recipients: [{ ...OK, amount: -5 }] }, 'VALIDATION_FAILED'],
      ['a negative amount string', { recipients: [{ ...OK, amount: '-5' }] }, 'VALIDATION_FAILED'],
      ['an amount with 5 decimals', { recipients: [{ ...OK, amount: '1.00001' }] }, 'VALIDATION_FAILED'],
      ['an amount of 16 integer digits', { recipients: [{ ...OK, amount: '1234567890123456' }] }, 'VALIDATION_FAILED'],
      ['an amount that is not a number', { recipients: [{ ...OK, amount: 'ten' }] }, 'VALIDATION_FAILED'],
      ['an amount in exponent form', { recipients: [{ ...OK, amount: '1e3' }] }, 'VALIDATION_FAILED'],
      ['a boolean amount', { recipients: [{ ...OK, amount: true }] }, 'VALIDATION_FAILED'],
      ['a missing amount', { recipients: [{ phone_number: OK.phone_number }] }, 'VALIDATION_FAILED'],
      ['an amount below the service minimum', { recipients: [{ ...OK, amount: '0.5' }] }, 'VALIDATION_FAILED'],
      ['an amount above the service maximum', { recipients: [{ ...OK, amount: '1000000.0001' }] }, 'VALIDATION_FAILED'],
      ['one bad recipient among 999 good ones', { recipients: [...recipients(999), { ...OK, amount: '-1' }] }, 'VALIDATION_FAILED'],
      ['reference missing', { reference: undefined }, 'VALIDATION_FAILED'],
      ['reference empty', { reference: '' }, 'VALIDATION_FAILED'],
      ['reference blank', { reference: '   ' }, 'VALIDATION_FAILED'],
      ['reference a number', { reference: 12345 }, 'VALIDATION_FAILED'],
      ['reference of 65 characters', { reference: 'r'.repeat(65) }, 'VALIDATION_FAILED'],
      ['service_code a number', { service_code: 1001 }, 'VALIDATION_FAILED'],
      ['service_code empty', { service_code: '' }, 'VALIDATION_FAILED'],
    ];

    it.each(cases)('%s', async (_case, overrides, errorCode) => {
      const stored = await airtimeStored(app, merchant.clientId);
      const money = await airtimeMoney(app, merchant);
      const body = airtimeBody([OK], { service_code: merchant.serviceCode, ...overrides });
      const res = await sendAirtime(app, merchant, body);
      expect(res.status).toBe(400);
      const echoed = typeof body.reference === 'string' && body.reference.length <= 64 ? body.reference : null;
      expect(res.body).toEqual({
        reference: echoed,
        response_code: 721,
        response_description: 'Validation Failed',
        error_code: errorCode,
        message: expect.stringMatching(/\S/),
      });
      expect(await airtimeStored(app, merchant.clientId)).toEqual(stored);
      expect(await airtimeMoney(app, merchant)).toEqual(money);
      if (typeof body.reference === 'string' && body.reference.trim())
        expect((await airtimeStatus(app, merchant, body.reference)).status).toBe(404);
    });

    it('names the offending recipient in the message', async () => {
      const res = await sendAirtime(
        app,
        merchant,
        airtimeBody([OK, { phone_number: '254712345679', amount: '1.00001' }], { service_code: merchant.serviceCode }),
      );
      expect(res.body.message).toContain('recipients.1.amount');
    });
  });

  it('accepts 1000 recipients and amounts as numbers or numeric strings, numbers with or without +', async () => {
    const body = airtimeBody(
      recipients(1000).map((r, i) => ({ phone_number: i % 2 ? `+${r.phone_number}` : r.phone_number, amount: i % 2 ? 1.5 : '1.5000' })),
      { service_code: merchant.serviceCode },
    );
    const before = await airtimeMoney(app, merchant);
    const res = await sendAirtime(app, merchant, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ reference: body.reference, response_code: 720, response_description: 'Accepted for processing' });
    expect((await airtimeMoney(app, merchant)).float).toBe(new Decimal(before.float).minus(1000 * 11.5).toFixed(4));
    const status = await airtimeStatus(app, merchant, body.reference);
    expect(status.body).toHaveLength(1000);
    expect(status.body.every((r: { service_status: number }) => r.service_status === 600)).toBe(true);
    expect(status.body[1]).toMatchObject({ phone_number: body.recipients[1].phone_number, amount: 1.5 });
  });

  describe('a reference is accepted once', () => {
    it('a replay, even with another body, answers 722 DUPLICATE_IGNORED and moves no money', async () => {
      const body = airtimeBody([OK], { service_code: merchant.serviceCode });
      expect((await sendAirtime(app, merchant, body)).status).toBe(200);
      const stored = await airtimeStored(app, merchant.clientId);
      const money = await airtimeMoney(app, merchant);
      for (const replay of [body, { ...body, recipients: [{ ...OK, amount: '75' }] }]) {
        const res = await sendAirtime(app, merchant, replay);
        expect(res.status).toBe(409);
        expect(res.body).toEqual({
          reference: body.reference,
          response_code: 722,
          response_description: 'Duplicate Ignored',
          error_code: 'DUPLICATE_IGNORED',
          message: expect.any(String),
        });
      }
      expect(await airtimeStored(app, merchant.clientId)).toEqual(stored);
      expect(await airtimeMoney(app, merchant)).toEqual(money);
    });

    it('20 concurrent identical requests: one accepted, 19 × 722, money reserved once', async () => {
      const body = airtimeBody(recipients(50, '2'), { service_code: merchant.serviceCode });
      const stored = await airtimeStored(app, merchant.clientId);
      const money = await airtimeMoney(app, merchant);
      const answers = await Promise.all(Array.from({ length: 20 }, () => sendAirtime(app, merchant, body)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(19).fill(409)]);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.response_code === 722)).toBe(true);
      expect(await airtimeStored(app, merchant.clientId)).toEqual({
        entries: stored.entries + 1,
        holds: stored.holds + 50,
        requests: stored.requests + 1,
        recipients: stored.recipients + 50,
      });
      expect((await airtimeMoney(app, merchant)).float).toBe(new Decimal(money.float).minus(50 * 12).toFixed(4));
    });

    it('the same reference is free for another client', async () => {
      const other = await createAirtimeMerchant(app, null);
      const body = airtimeBody([OK], { service_code: merchant.serviceCode });
      expect((await sendAirtime(app, merchant, body)).status).toBe(200);
      expect((await sendAirtime(app, other, { ...body, service_code: other.serviceCode })).status).toBe(200);
    });
  });

  describe('the float must cover every amount and fee', () => {
    it('answers 721 INSUFFICIENT_BALANCE and stores nothing when it falls short by 0.0001; the reference stays free', async () => {
      const poor = await createAirtimeMerchant(app, null, { float: '119.9999' });
      const body = airtimeBody(
        [
          { phone_number: '254711000001', amount: '50' },
          { phone_number: '254711000002', amount: '50' },
        ],
        { service_code: poor.serviceCode },
      );
      const stored = await airtimeStored(app, poor.clientId);
      const res = await sendAirtime(app, poor, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        reference: body.reference,
        response_code: 721,
        response_description: 'Insufficient Balance',
        error_code: 'INSUFFICIENT_BALANCE',
        message: expect.any(String),
      });
      expect(await airtimeStored(app, poor.clientId)).toEqual(stored);
      expect((await airtimeMoney(app, poor)).float).toBe('119.9999');
      expect((await airtimeStatus(app, poor, body.reference)).status).toBe(404);

      await fundFloat(app, poor, '0.0001');
      expect((await sendAirtime(app, poor, body)).status).toBe(200);
      expect((await airtimeMoney(app, poor)).float).toBe('0.0000');
    });
  });

  // Refused by the HTTP layer before any route runs, yet in the disbursement family's shape (issue 22).
  it('answers a body that is not JSON with 400 in the disbursement shape and stores nothing', async () => {
    const stored = await airtimeStored(app, merchant.clientId);
    const res = await request(app.getHttpServer())
      .post('/v1/gw/airtime/send')
      .set('x-access-token', merchant.token)
      .set('content-type', 'application/json')
      .send('{"reference": "x", "recipients": [');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ response_code: 721, error_code: 'VALIDATION_FAILED', response_description: 'Validation Failed' });
    expect(await airtimeStored(app, merchant.clientId)).toEqual(stored);
  });

  it('is described in the OpenAPI document with request and response schemas', async () => {
    const doc = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
    const send = doc.paths['/v1/gw/airtime/send'].post;
    expect(send.requestBody.content['application/json'].schema.$ref).toMatch(/AirtimeRequestDto$/);
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['200', '400', '409']));
    const status = doc.paths['/v1/gw/airtime/{reference}/status'].get;
    expect(status.responses['200'].content['application/json'].schema).toMatchObject({ type: 'array' });
    expect(doc.components.schemas.AirtimeRequestDto.properties.recipients).toMatchObject({ type: 'array', maxItems: 1000 });
  });

  it('needs a gateway token', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/gw/airtime/send')
      .send(airtimeBody([OK]));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' });
    expect((await request(app.getHttpServer()).get('/v1/gw/airtime/x/status')).status).toBe(401);
  });
});
