import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { gateway, GatewayMerchant } from '../support/gateway-fixtures';
import {
  b2bBody,
  b2bStatusPath,
  bankPayoutBody,
  createPayoutMerchant,
  expectPayoutAnswer,
  floatBalance,
  imtBody,
  localPayoutBody,
  PAYOUT_PATHS,
  payoutReference,
  statusPath,
  storedCounts,
} from '../support/disbursement-fixtures';
import { createTestApp } from '../support/test-app';

type Kind = keyof typeof PAYOUT_PATHS;
type Change = Record<string, unknown>;

const LOCAL_REQUIRED = [
  'payout_reference',
  'service_code',
  'recipient_first_name',
  'recipient_last_name',
  'destination_type',
  'destination_name',
  'recipient_phone_number',
  'recipient_account_number',
  'recipient_account_name',
  'source_currency',
  'destination_currency',
  'exchange_rate',
  'sender_amount',
  'sender_country_code',
  'recipient_amount',
  'payment_description',
  'callback_url',
];

const IMT_REQUIRED = [
  'payout_reference',
  'service_code',
  'sender_first_name',
  'sender_last_name',
  'sender_type',
  'sender_country_code',
  'recipient_type',
  'recipient_first_name',
  'recipient_last_name',
  'recipient_phone_number',
  'recipient_account_number',
  'recipient_account_name',
  'recipient_occupation',
  'destination_type',
  'destination_name',
  'source_currency',
  'destination_currency',
  'income_source',
  'fund_purpose',
  'exchange_rate',
  'sender_amount',
  'recipient_amount',
  'payment_description',
  'callback_url',
];

const B2B_REQUIRED = [
  'payout_reference',
  'service_code',
  'payment_account_reference',
  'recipient_name',
  'recipient_type',
  'recipient_account_number',
  'amount',
  'payment_description',
  'payment_method',
  'currency_code',
  'country_code',
  'callback_url',
];

/** Amounts the contract refuses (§3: NaN, negative, zero, more than 4 decimals, more than 15 integer digits) and other non-amounts. */
const BAD_AMOUNTS: Array<[string, unknown]> = [
  ['zero', 0],
  ['zero as a string', '0.0000'],
  ['negative', -5],
  ['negative as a string', '-5.00'],
  ['5 decimals', '1.23456'],
  ['16 integer digits', '1234567890123456'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['an empty string', ''],
  ['letters after digits', '12abc'],
  ['a boolean', true],
  ['an object', { value: 10 }],
  ['an array', [10]],
  ['null', null],
  ['below the service minimum (1)', '0.9999'],
];

const long = (n: number) => 'x'.repeat(n);

/**
 * Malformed payout, IMT and B2B requests (disbursement document §2, §7; provider contract §3, §5, §10 "Payouts" and
 * "Limits on strings"): each one is 400 with response_code 721 and an error_code, never a 5xx; nothing is stored
 * (no payout, hold or journal entry; the reference stays free and its status query answers 723) and the float is
 * unchanged.
 */
describe('payout requests with bad input', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createPayoutMerchant(app, { float: '5000' });
  });
  afterAll(async () => app.close());

  const bodyFor: Record<Kind, (change?: Change) => Record<string, unknown>> = {
    local: (change) => localPayoutBody(merchant, change),
    imt: (change) => imtBody(merchant, change),
    b2b: (change) => b2bBody(merchant, change),
  };

  /** Sends the body; expects 400/721 and that nothing at all changed. */
  async function expectRejected(kind: Kind, body: unknown, errorCode?: string, send?: (test: request.Test) => request.Test) {
    const before = { float: await floatBalance(app, merchant), stored: await storedCounts(app, merchant.clientId) };
    const post = gateway(app, merchant.token).post(PAYOUT_PATHS[kind]);
    const res = await (send ? send(post) : post.send(body as object));
    expect(res.status).toBeLessThan(500);
    expectPayoutAnswer(res, 721, undefined, errorCode);
    const reference = (body as Record<string, unknown> | null)?.payout_reference;
    if (typeof reference === 'string' && reference.length > 0 && reference.length <= 64) {
      expect(res.body.payout_reference).toBe(reference);
      expectPayoutAnswer(await gateway(app, merchant.token).get(kind === 'b2b' ? b2bStatusPath(reference) : statusPath(reference)), 723);
    }
    expect({ float: await floatBalance(app, merchant), stored: await storedCounts(app, merchant.clientId) }).toEqual(before);
    return res;
  }

  describe.each<[Kind, string[]]>([
    ['local', LOCAL_REQUIRED],
    ['imt', IMT_REQUIRED],
    ['b2b', B2B_REQUIRED],
  ])('%s: a missing required field', (kind, fields) => {
    it.each(fields.map((f) => [f]))('without %s → 721', async (field) => {
      const body = bodyFor[kind]();
      delete body[field];
      await expectRejected(kind, body);
    });

    it.each(fields.map((f) => [f]))('%s null → 721', async (field) => {
      await expectRejected(kind, bodyFor[kind]({ [field]: null }));
    });
  });

  describe('amounts', () => {
    it.each(BAD_AMOUNTS)('local sender_amount %s → 721', async (_case, amount) => {
      await expectRejected('local', bodyFor.local({ sender_amount: amount, recipient_amount: amount }));
    });
    it.each(BAD_AMOUNTS)('IMT sender_amount %s → 721', async (_case, amount) => {
      await expectRejected(
        'imt',
        bodyFor.imt({ sender_amount: amount, recipient_amount: amount, exchange_rate: '1', destination_currency: 'KES' }),
      );
    });
    it.each(BAD_AMOUNTS)('B2B amount %s → 721', async (_case, amount) => {
      await expectRejected('b2b', bodyFor.b2b({ amount }));
    });
    it.each<[string, unknown]>([
      ['zero', '0'],
      ['negative', '-0.0077'],
      ['not a number', 'abc'],
      ['an object', { rate: 1 }],
    ])('IMT exchange_rate %s → 721', async (_case, rate) => {
      await expectRejected('imt', bodyFor.imt({ exchange_rate: rate }));
    });
    it('above the service maximum (1,000,000) → 721', async () => {
      await expectRejected('local', bodyFor.local({ sender_amount: '1000000.0001', recipient_amount: '1000000.0001' }));
      await expectRejected('b2b', bodyFor.b2b({ amount: '1000001' }));
    });
  });

  describe('enums, codes and numbers', () => {
    // Every row has all four cells: jest hands a callback to a test function with more parameters than the row has.
    it.each<[Kind, string, Change, string | undefined]>([
      ['local', 'destination_type CARD', { destination_type: 'CARD' }, 'INVALID_DESTINATION_TYPE'],
      ['local', 'destination_type in lower case', { destination_type: 'mobile' }, 'INVALID_DESTINATION_TYPE'],
      ['local', 'destination_type a number', { destination_type: 1 }, undefined],
      ['local', 'destination_name in lower case', { destination_name: 'mmoney_ken' }, undefined],
      ['local', 'destination_name empty', { destination_name: '' }, undefined],
      ['local', 'a phone number with letters', { recipient_phone_number: '2547abc45678' }, 'INVALID_PHONE_NUMBER'],
      ['local', 'a phone number of 26 digits', { recipient_phone_number: '2'.repeat(26) }, 'INVALID_PHONE_NUMBER'],
      ['local', 'an empty phone number', { recipient_phone_number: '' }, undefined],
      ['local', 'source_currency unknown', { source_currency: 'XXX' }, undefined],
      ['local', 'source_currency in lower case', { source_currency: 'kes' }, undefined],
      ['local', 'source_currency not the float currency', { source_currency: 'USD' }, undefined],
      ['local', 'destination_currency unknown', { destination_currency: 'ZZZ' }, undefined],
      ['local', 'a 2-letter country code', { sender_country_code: 'KE' }, undefined],
      ['local', 'a 4-letter country code', { sender_country_code: 'KENY' }, undefined],
      ['local', 'a country code with a digit', { sender_country_code: 'KE1' }, undefined],
      ['local', 'a callback_url that is no URL', { callback_url: 'not a url' }, undefined],
      ['local', 'an ftp callback_url', { callback_url: 'ftp://merchant.invalid/cb' }, undefined],
      ['local', 'a recipient_first_name that is a number', { recipient_first_name: 12345 }, undefined],
      ['local', 'a recipient_last_name that is an array', { recipient_last_name: ['Kamau'] }, undefined],
      ['local', 'a payment_description that is an object', { payment_description: { text: 'x' } }, undefined],
      ['local', 'a payout_reference that is an object', { payout_reference: { ref: 1 } }, undefined],
      ['local', 'a payout_reference that is a boolean', { payout_reference: true }, undefined],
      ['local', 'an empty payout_reference', { payout_reference: '' }, undefined],
      ['imt', 'sender_type ROBOT', { sender_type: 'ROBOT' }, undefined],
      ['imt', 'recipient_type PERSON', { recipient_type: 'PERSON' }, undefined],
      ['imt', 'destination_type WALLET', { destination_type: 'WALLET' }, 'INVALID_DESTINATION_TYPE'],
      ['imt', 'destination_currency unknown', { destination_currency: 'XYZ', exchange_rate: '1', recipient_amount: '1000' }, undefined],
      ['imt', 'a 2-letter sender country code', { sender_country_code: 'KE' }, undefined],
      ['b2b', 'currency_code unknown', { currency_code: 'XXX' }, undefined],
      ['b2b', 'a 2-letter country_code', { country_code: 'KE' }, undefined],
      ['b2b', 'a numeric country_code', { country_code: 404 }, undefined],
      ['b2b', 'a callback_url that is no URL', { callback_url: 'merchant callback' }, undefined],
    ])('%s: %s → 721', async (kind, _case, change, errorCode) => {
      await expectRejected(kind, bodyFor[kind](change), errorCode);
    });
  });

  describe('BANK needs a bank code (2–11 alphanumerics)', () => {
    it.each<[string, Change]>([
      ['absent', { recipient_bank_code: undefined }],
      ['empty', { recipient_bank_code: '' }],
      ['one character', { recipient_bank_code: '1' }],
      ['12 characters', { recipient_bank_code: 'ABCDEF123456' }],
      ['with a dash', { recipient_bank_code: 'KC-01' }],
      ['a number', { recipient_bank_code: 11 }],
    ])('local BANK payout, bank code %s → 721', async (_case, change) => {
      const body = bankPayoutBody(merchant, 'ok', change);
      if (change.recipient_bank_code === undefined) delete body.recipient_bank_code;
      await expectRejected('local', body);
    });

    it('IMT to BANK without a bank code → 721', async () => {
      const body = imtBody(merchant, { destination_type: 'BANK', destination_name: 'BANK_KEN' });
      await expectRejected('imt', body);
    });

    it('MOBILE without a bank code (absent or empty) is fine → 720', async () => {
      const absent = localPayoutBody(merchant);
      delete absent.recipient_bank_code;
      expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(absent), 720, absent.payout_reference as string);
      const empty = localPayoutBody(merchant, { recipient_bank_code: '' });
      expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(empty), 720, empty.payout_reference as string);
    });
  });

  describe('over-long strings', () => {
    it.each<[Kind, string, Change]>([
      ['local', 'payout_reference of 65', { payout_reference: `po-${long(62)}` }],
      ['local', 'service_code of 33', { service_code: long(33) }],
      ['local', 'recipient_first_name of 101', { recipient_first_name: long(101) }],
      ['local', 'recipient_last_name of 101', { recipient_last_name: long(101) }],
      ['local', 'recipient_account_name of 101', { recipient_account_name: long(101) }],
      ['local', 'recipient_account_number of 65', { recipient_account_number: '1'.repeat(65) }],
      ['local', 'destination_name of 33', { destination_name: 'M'.repeat(33) }],
      ['local', 'payment_description of 256', { payment_description: long(256) }],
      ['local', 'callback_url of 2,100', { callback_url: `https://merchant.invalid/${long(2076)}` }],
      ['imt', 'recipient_occupation of 256', { recipient_occupation: long(256) }],
      ['imt', 'sender_first_name of 101', { sender_first_name: long(101) }],
      ['imt', 'sender_document_number of 256', { sender_document_number: long(256) }],
      ['imt', 'fund_purpose of 256', { fund_purpose: long(256) }],
      ['b2b', 'recipient_name of 101', { recipient_name: long(101) }],
      ['b2b', 'payment_account_reference of 256', { payment_account_reference: long(256) }],
      ['b2b', 'payment_description of 256', { payment_description: long(256) }],
      ['b2b', 'payout_reference of 65', { payout_reference: `b2b-${long(61)}` }],
    ])('%s: %s → 721', async (kind, _case, change) => {
      await expectRejected(kind, bodyFor[kind](change));
    });
  });

  describe('bodies that are not a JSON object', () => {
    it.each<[Kind, string, string]>([
      ['local', 'malformed JSON', '{"payout_reference": "x",'],
      ['local', 'a JSON array', '[]'],
      ['local', 'a JSON string', '"payout"'],
      ['local', 'JSON null', 'null'],
      ['local', 'an empty object', '{}'],
      ['imt', 'malformed JSON', '{not json'],
      ['b2b', 'malformed JSON', '{"amount": 10'],
      ['b2b', 'a JSON number', '42'],
    ])('%s: %s → 400 / 721', async (kind, _case, raw) => {
      await expectRejected(kind, null, undefined, (test) => test.set('content-type', 'application/json').send(raw));
    });
  });

  describe('service and float', () => {
    it('an unknown service_code → 721 SERVICE_NOT_ALLOWED on every route', async () => {
      for (const kind of ['local', 'imt', 'b2b'] as Kind[])
        await expectRejected(kind, bodyFor[kind]({ service_code: 'NO_SUCH_SERVICE' }), 'SERVICE_NOT_ALLOWED');
    });

    it('an inactive service → 721 SERVICE_NOT_ALLOWED, its float untouched', async () => {
      const inactive = await createPayoutMerchant(app, { float: '500', serviceOverrides: { is_active: 0 } });
      const body = localPayoutBody(inactive);
      const res = await gateway(app, inactive.token).post(PAYOUT_PATHS.local).send(body);
      expectPayoutAnswer(res, 721, body.payout_reference as string, 'SERVICE_NOT_ALLOWED');
      expect((await floatBalance(app, inactive)).balance).toBe('500.0000');
      expect(await storedCounts(app, inactive.clientId)).toMatchObject({ holds: 0, payouts: 0 });
    });

    it('amount + fee above the available float → 721 INSUFFICIENT_BALANCE; exactly the float is accepted', async () => {
      const poor = await createPayoutMerchant(app, { float: '109.9999' });
      const reference = payoutReference();
      const over = localPayoutBody(poor, { payout_reference: reference, sender_amount: '100', recipient_amount: '100' });
      const counts = await storedCounts(app, poor.clientId);
      expectPayoutAnswer(await gateway(app, poor.token).post(PAYOUT_PATHS.local).send(over), 721, reference, 'INSUFFICIENT_BALANCE');
      expect(await storedCounts(app, poor.clientId)).toEqual(counts);
      expect((await floatBalance(app, poor)).balance).toBe('109.9999');
      expectPayoutAnswer(await gateway(app, poor.token).get(statusPath(reference)), 723);
      // The same reference, corrected to fit: accepted, and the float is exactly empty.
      const fits = localPayoutBody(poor, { payout_reference: reference, sender_amount: '99.9999', recipient_amount: '99.9999' });
      expectPayoutAnswer(await gateway(app, poor.token).post(PAYOUT_PATHS.local).send(fits), 720, reference);
      expect(await floatBalance(app, poor)).toMatchObject({ balance: '0.0000', reserved_balance: '109.9999', ledger_balance: '109.9999' });
    });
  });

  it('a rejected request leaves its reference free: the corrected request with the same reference is accepted', async () => {
    for (const kind of ['local', 'imt', 'b2b'] as Kind[]) {
      const reference = payoutReference(kind);
      const bad =
        kind === 'b2b'
          ? bodyFor.b2b({ payout_reference: reference, amount: '-1' })
          : bodyFor[kind]({ payout_reference: reference, sender_amount: '-1' });
      await expectRejected(kind, bad);
      const good = bodyFor[kind]({ payout_reference: reference });
      expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS[kind]).send(good), 720, reference);
    }
  });
});
