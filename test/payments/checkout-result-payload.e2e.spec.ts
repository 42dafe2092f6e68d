import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { checkoutResult, CheckoutSessionRow, SELECT_CHECKOUT } from '../../src/payments/checkout-session';
import { PaymentsRepository } from '../../src/payments/payments.repository';
import { initiateCheckout } from '../support/collections-fixtures';
import { createGatewayMerchant, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

interface PaymentSpec {
  status: number;
  amount: string;
  msisdn?: string;
  settledAt?: string | null;
  payerTransactionId?: string | null;
  extraData?: unknown;
  description?: string;
}

/**
 * The checkout callback is built in SQL when payments settle (checkout_result_payload) and in TypeScript on
 * expiry, reversal and the status query (checkoutResult): the two must give the merchant the same document. Compared
 * as stored (jsonb text: the bytes a callback sends) and as parsed JSON (numbers stay numbers, strings strings),
 * over sessions in every status with several payments in every status, amounts with decimals, dates with
 * microseconds, missing settlement times and receipts, and extra data of every JSON type.
 */
describe('checkout_result_payload (SQL) = checkoutResult (TypeScript)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(3_600_000) });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  const db = () => dataSource(app);

  /** A session in `status` with the given payments, written as the settlement would leave them. */
  async function sessionWith(status: number, payments: PaymentSpec[], overrides: Record<string, unknown> = {}): Promise<string> {
    const { reference } = await initiateCheckout(app, merchant, sandbox.receiver, { amount: 2750, ...overrides });
    const [[session]] = await db().query(`UPDATE checkout_sessions SET status = $2 WHERE checkout_reference = $1 RETURNING id`, [
      reference,
      status,
    ]);
    for (const p of payments) {
      await db().query(
        `INSERT INTO payments (client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
           origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number, currency,
           country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge, payment_method_code,
           extra_data, description, notify_client, notify_originator, callback_url, payment_status, settled_at, payer_transaction_id)
         SELECT cs.client_id, cs.client_service_id, cs.id, cs.merchant_transaction_id, 'checkout:' || gen_random_uuid(),
           'WEB', $2, $2, cs.payer_name, cs.payer_email, cs.account_number, '', cs.currency,
           'KEN', $3::numeric, 0, $3::numeric, 10, false, 'MMONEY',
           $4::jsonb, coalesce($5, cs.narration), false, false, cs.callback_url, $6, $7::timestamptz, $8
         FROM checkout_sessions cs WHERE cs.id = $1`,
        [
          session.id,
          p.msisdn ?? '254712345678',
          p.amount,
          JSON.stringify(p.extraData ?? { order: 42 }),
          p.description ?? null,
          p.status,
          p.settledAt === undefined ? '2025-03-04 05:06:07.123456+00' : p.settledAt,
          p.payerTransactionId === undefined ? 'SBX0123ABCD' : p.payerTransactionId,
        ],
      );
    }
    return String(session.id);
  }

  async function expectSamePayload(sessionId: string) {
    const [session]: CheckoutSessionRow[] = await db().query(`${SELECT_CHECKOUT} WHERE cs.id = $1`, [sessionId]);
    const before = Date.now();
    const fromTs = checkoutResult(session, await app.get(PaymentsRepository).ofSession(db().manager, sessionId));
    const [row] = await db().query(
      `SELECT ($1::jsonb - 'timestamp')::text AS ts_text, (checkout_result_payload($2) - 'timestamp')::text AS sql_text,
         checkout_result_payload($2) AS sql`,
      [fromTs, sessionId],
    );
    const after = Date.now();
    expect(row.sql_text).toBe(row.ts_text);
    const { timestamp, ...sql } = row.sql;
    const { timestamp: _tsTimestamp, ...ts } = JSON.parse(JSON.stringify(fromTs));
    expect(sql).toEqual(ts);
    expect(timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(timestamp)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(timestamp)).toBeLessThanOrEqual(after + 1000);
    return sql;
  }

  const extraData = {
    order: 42,
    ratio: 0.1,
    tiny: 1.5e-7,
    inexact: 0.1 + 0.2,
    large: 12345678901234,
    flag: true,
    nothing: null,
    note: 'ünïcødé "quoted" \\ ✓',
    list: [1, 'two', { three: 3 }, []],
  };

  it.each([
    [
      'paid (801) by two successful payments after a failed one',
      801,
      [
        { status: 701, amount: '2750.0000', msisdn: '254700000001', payerTransactionId: null },
        { status: 700, amount: '1000.0000', settledAt: '2025-03-04 05:06:07.999999+00' },
        { status: 700, amount: '1750.0000', settledAt: '2025-03-04 05:06:08+00', extraData },
      ],
    ],
    [
      'part paid (802) with decimals',
      802,
      [
        { status: 700, amount: '1234.5678', settledAt: '2025-12-31 23:59:59.9995+00' },
        { status: 701, amount: '99.0001', payerTransactionId: null },
      ],
    ],
    [
      'unpaid (803) after failures',
      803,
      [
        { status: 701, amount: '2750.0000' },
        { status: 701, amount: '100.0000', description: 'Retry — “smart quotes”\nnew line' },
      ],
    ],
    ['expired (820) with no payment', 820, []],
    ['reversed (840)', 840, [{ status: 702, amount: '2750.0000' }]],
    [
      'jammed (850), its payment without a settlement time',
      850,
      [
        { status: 700, amount: '500.0000' },
        { status: 704, amount: '2250.0000', settledAt: null, payerTransactionId: null },
      ],
    ],
    [
      'processing (851): the pending payment is left out',
      851,
      [
        { status: 701, amount: '2750.0000' },
        { status: 703, amount: '2750.0000', settledAt: null, payerTransactionId: null },
      ],
    ],
  ] as Array<[string, number, PaymentSpec[]]>)('%s', async (_name, status, payments) => {
    const sql = await expectSamePayload(await sessionWith(status, payments));
    expect(sql.status).toBe(status);
    expect(sql.payments).toHaveLength(payments.filter((p) => p.status !== 703).length);
  });

  it('the amount is echoed as a whole number, and payments come oldest first', async () => {
    const sessionId = await sessionWith(802, [
      { status: 700, amount: '1.0000' },
      { status: 701, amount: '2.0000' },
      { status: 700, amount: '3.0000' },
    ]);
    await db().query(`UPDATE checkout_sessions SET amount = 999999999999999.9999 WHERE id = $1`, [sessionId]);
    const sql = await expectSamePayload(sessionId);
    expect(sql.amount).toBe('999999999999999');
    expect(sql.payments.map((p: { amount: string }) => p.amount)).toEqual(['1.0000', '2.0000', '3.0000']);
  });
});
