import { ArgumentMetadata, HttpException, PipeTransform } from '@nestjs/common';
import fc from 'fast-check';
import { ChargeRequestDto } from '../../src/charges/charge.dto';
import { CheckoutInitiateDto } from '../../src/checkout/checkout.dto';
import { B2bPayoutDto, ImtPayoutDto, LocalPayoutDto } from '../../src/payout-requests/payout.dto';
import { B2B_PAYOUT_EXAMPLES, IMT_PAYOUT_EXAMPLES, LOCAL_PAYOUT_EXAMPLES } from '../../src/payout-requests/payout.examples';
import * as compiled from '../../src/common/http/compiled-validation';
import { createValidationPipe } from '../../src/common/http/validation';
import { CreditDebitDto, MoneyCommandQuery, TransferDto } from '../../src/transactions/transaction.dto';

/**
 * The compiled fast path must be invisible: for any input, the validation pipe with it answers exactly what the pipe
 * without it answers — the same DTO (class, fields, their order, values, absent fields) or the same error (class,
 * status, body, problems with their contexts). Inputs are valid bodies of the hot routes with fields changed,
 * removed or added, as JSON.parse makes them (own `__proto__` keys included).
 */

const RUNS = 1_500;

const money = {
  client_code: 'ACME',
  client_service_code: 'TOPUP',
  transaction_amount: '100.50',
  currency: 'KES',
  source_transaction_id: 'INV-2024-0001',
};

const templates: Array<{
  dto: new () => object;
  type: ArgumentMetadata['type'];
  body: Record<string, unknown>;
  /** Fields of free JSON, which class-transformer copies key by key. */
  freeJson?: string;
}> = [
  {
    dto: TransferDto,
    type: 'body',
    body: {
      ...money,
      source_account_number: '1000000001',
      destination_account_number: '1000000002',
      transaction_source: 'INTERNAL',
      transaction_narration: 'Rent',
      source_transaction_data: { order: 42, lines: [{ sku: 'A', qty: 1 }] },
      transaction_date: '2024-03-01T10:15:00Z',
    },
    freeJson: 'source_transaction_data',
  },
  { dto: CreditDebitDto, type: 'body', body: { ...money, account_number: '1000000001' } },
  { dto: MoneyCommandQuery, type: 'query', body: { command: 'CREDIT' } },
  {
    dto: ChargeRequestDto,
    type: 'body',
    body: {
      external_reference: 'ORDER-42',
      client_code: 'ACME',
      origin_channel_code: 'API',
      originator_msisdn: '254711000111',
      payer_msisdn: '254712345678',
      payer_name: 'Jane Payer',
      payer_email: 'jane.payer@example.com',
      service_code: 'TOPUP',
      account_number: 'INV-ACC-1',
      invoice_number: '',
      currency_code: 'KES',
      country_code: 'KEN',
      amount: '100',
      add_transaction_charge: false,
      transaction_charge: '0',
      payment_method_code: 'MMONEY_KEN',
      extra_data: { order: 'A-1', nested: { ok: true } },
      description: 'Order A-1',
      notify_client: false,
      notify_originator: false,
      callback_url: 'https://merchant.example.com/callback',
      otp_code: '123456',
    },
    freeJson: 'extra_data',
  },
  {
    dto: CheckoutInitiateDto,
    type: 'body',
    body: {
      merchant_transaction_id: 'mtx-1',
      amount: 1500,
      payer_name: 'Jane Payer',
      payer_email: 'jane.payer@example.com',
      payer_msisdn: '254712345678',
      service_code: 'TOPUP',
      account_number: 'ACC-2024-0001',
      expires_in: 60,
      narration: 'Order #42',
      callback_url: 'https://merchant.example.com/callback',
      redirect_url: 'https://merchant.example.com/thanks',
      extra_data: { split_settlements: [{ account: '1000000005', amount: '100', reason: 'Partner' }] },
    },
    freeJson: 'extra_data',
  },
  { dto: LocalPayoutDto, type: 'body', body: LOCAL_PAYOUT_EXAMPLES.bank.value },
  { dto: ImtPayoutDto, type: 'body', body: IMT_PAYOUT_EXAMPLES.imt.value },
  { dto: B2bPayoutDto, type: 'body', body: B2B_PAYOUT_EXAMPLES.paybill.value },
];

/** Keys that class-transformer or Nest treat specially, and ordinary ones. */
const key = fc.oneof(
  { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'a\u0000', '\ud800'),
);

/** Free JSON with those keys anywhere; nesting now and then past the pipe's depth limit. */
const freeJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    ),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const deep = fc.integer({ min: 60, max: 70 }).map((depth) => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { v: value };
  return value;
});

/** Values that sit on, or just past, the edge of some rule. */
const edgy = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\t',
    'x',
    'a\u0000b',
    '\ud800',
    '😀'.repeat(32),
    'a'.repeat(25),
    'a'.repeat(26),
    'a'.repeat(32),
    'a'.repeat(33),
    'a'.repeat(50),
    'a'.repeat(51),
    'a'.repeat(64),
    'a'.repeat(65),
    'a'.repeat(100),
    'a'.repeat(101),
    'a'.repeat(255),
    'a'.repeat(256),
    'a'.repeat(500),
    'a'.repeat(501),
    '0',
    '0.00',
    '-1',
    '1e3',
    ' 100',
    '100.12345',
    '100.1234',
    '1234567890123456',
    '123456789012345',
    'KES',
    'kes',
    'USD',
    'XXX',
    'KEN',
    'API',
    'WEB',
    'api',
    'CREDIT',
    'DEBIT',
    'REVERSE',
    '+254712345678',
    '254712345678',
    '12345',
    'jane@example.com',
    'not-an-email',
    '2024-03-01',
    '2024-02-30',
    '2009-W01-1',
    '2024-03-01T10:15:00+03:00',
    'https://example.com',
  ),
  fc.constantFrom(0, -0, 1, -1, 0.5, 1.5, 100, 1e21, 1e-7, 10_080, 10_081, 999_999_999_999_999, 1_000_000_000_000_000, 2 ** 53),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 10 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  freeJson,
  deep,
);

type Change =
  { kind: 'set'; field: string; value: unknown } | { kind: 'delete'; field: string } | { kind: 'add'; key: string; value: unknown };

function changes(fields: string[]): fc.Arbitrary<Change[]> {
  const field = fc.constantFrom(...fields);
  return fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), field, value: edgy }) },
      fc.record({ kind: fc.constant('delete' as const), field }),
      fc.record({ kind: fc.constant('add' as const), key, value: edgy }),
    ),
    { maxLength: 3 },
  );
}

/** The body's JSON text with the changes applied, parsed as Fastify parses it (own `__proto__` keys stay keys). */
function bodyOf(template: Record<string, unknown>, edits: Change[]): string {
  const entries: Array<[string, unknown]> = Object.entries(template);
  for (const edit of edits) {
    const at = entries.findIndex(([k]) => k === (edit.kind === 'add' ? edit.key : edit.field));
    if (edit.kind === 'delete') {
      if (at >= 0) entries.splice(at, 1);
    } else if (at >= 0) entries[at] = [entries[at][0], edit.value];
    else entries.push([edit.kind === 'add' ? edit.key : edit.field, edit.value]);
  }
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
}

/** JSON.stringify, except that an object's `__proto__` key is written out like any other (as a client would). */
function jsonText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

type Outcome =
  | { dto: object; className: string; keys: string[] }
  | { error: string; status: number; response: unknown; problems: unknown; target: unknown };

async function outcome(pipe: PipeTransform, input: unknown, metadata: ArgumentMetadata): Promise<Outcome> {
  try {
    const dto = (await pipe.transform(input, metadata)) as object;
    return { dto, className: dto.constructor.name, keys: Object.keys(dto) };
  } catch (error) {
    if (!(error instanceof HttpException)) throw error;
    const { problems, target } = error as unknown as { problems?: unknown; target?: unknown };
    return { error: error.constructor.name, status: error.getStatus(), response: error.getResponse(), problems, target };
  }
}

describe('compiled validation of the hot routes (fast path vs the validation pipe)', () => {
  const pipe = createValidationPipe();

  /** The pipe's answer with the fast path switched off: what every request got before it existed. */
  async function usualOutcome(input: unknown, metadata: ArgumentMetadata): Promise<Outcome> {
    const off = jest.spyOn(compiled, 'compiledDto').mockReturnValue(undefined);
    try {
      return await outcome(pipe, input, metadata);
    } finally {
      off.mockRestore();
    }
  }

  for (const template of templates) {
    const metadata: ArgumentMetadata = { type: template.type, metatype: template.dto, data: undefined };

    it(`${template.dto.name}: a valid input takes the fast path and gets the very DTO the pipe builds`, async () => {
      const text = JSON.stringify(template.body);
      expect(compiled.compiledDto(JSON.parse(text), template.dto)).toBeDefined();
      const fast = await outcome(pipe, JSON.parse(text), metadata);
      expect(fast).toStrictEqual(await usualOutcome(JSON.parse(text), metadata));
      expect(fast).toMatchObject({ className: template.dto.name });
    });

    it(`${template.dto.name}: any input gets the same answer either way (${RUNS} generated inputs)`, async () => {
      let fastTaken = 0;
      await fc.assert(
        fc.asyncProperty(changes(Object.keys(template.body)), async (edits) => {
          const text = bodyOf(template.body, edits);
          if (compiled.compiledDto(JSON.parse(text), template.dto) !== undefined) fastTaken++;
          const fast = await outcome(pipe, JSON.parse(text), metadata);
          const usual = await usualOutcome(JSON.parse(text), metadata);
          expect(fast).toStrictEqual(usual);
        }),
        { numRuns: RUNS },
      );
      // The generator is not all noise: a fair share of the inputs are valid and take the fast path.
      expect(fastTaken).toBeGreaterThan(RUNS / 10);
    });

    if (template.freeJson) {
      const field = template.freeJson;
      it(`${template.dto.name}: free JSON in ${field} with any keys comes out as the pipe copies it (${RUNS} inputs)`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.dictionary(key, freeJson, { maxKeys: 5 }), async (data) => {
            const text = bodyOf(template.body, [{ kind: 'set', field, value: data }]);
            const fast = await outcome(pipe, JSON.parse(text), metadata);
            expect(fast).toStrictEqual(await usualOutcome(JSON.parse(text), metadata));
          }),
          { numRuns: RUNS },
        );
      });
    }
  }

  it("a query as Fastify's parser makes it (an empty prototype without one of its own) takes the fast path too", async () => {
    const parsed = () => Object.assign(Object.create(Object.create(null)), { command: 'CREDIT' });
    const metadata: ArgumentMetadata = { type: 'query', metatype: MoneyCommandQuery, data: undefined };
    expect(compiled.compiledDto(parsed(), MoneyCommandQuery)).toBeDefined();
    expect(await outcome(pipe, parsed(), metadata)).toStrictEqual(await usualOutcome(parsed(), metadata));
  });

  it('a DTO that is not marked never takes the fast path', () => {
    class Unmarked {}
    expect(compiled.compiledDto({}, Unmarked)).toBeUndefined();
  });
});
