import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CheckoutSessionRow, SELECT_CHECKOUT, wholeAmount } from '../../src/collections/checkout-session';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from '../../src/collections/payment';
import { PaymentsRepository } from '../../src/collections/payments.repository';
import { checkoutStatus, sessionWithPayments, SessionPaymentSpec } from '../support/collections-fixtures';
import { createGatewayMerchant, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/**
 * A checkout's result (its callback and the status query's answer) is built in SQL, checkout_result_payload; each of
 * its payments is a charge result, which TypeScript builds for direct charges (paymentResult, the charge status and
 * callbacks), with a numeric payment_status and payment_account_reference. The two must give the merchant the same
 * record, and the document its keys in the documented order: compared as text (the status query's bytes, and the
 * stored jsonb a callback sends) and as parsed JSON, over sessions in every status with several payments in every
 * status, amounts with decimals, dates with microseconds, missing settlement times and receipts, and extra data of
 * every JSON type.
 */
describe('checkout_result_payload (SQL): the checkout document, its payments as paymentResult (TypeScript)', () => {
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
  const sessionWith = async (status: number, payments: SessionPaymentSpec[]) =>
    (await sessionWithPayments(app, merchant, sandbox.receiver, status, payments)).sessionId;

  /** The checkout document in the documented order, its payments as paymentResult shapes them. */
  function expectedResult(session: CheckoutSessionRow, payments: PaymentRow[]) {
    return {
      amount: String(wholeAmount(session.amount)),
      checkout_reference: session.checkout_reference,
      currency: session.currency,
      merchant_transaction_id: session.merchant_transaction_id,
      narration: session.narration,
      payments: payments
        .filter((p) => p.payment_status !== PAYMENT_STATUS.PENDING)
        .map((p) => ({ ...paymentResult(p), payment_status: p.payment_status, payment_account_reference: p.payer_msisdn })),
      status: session.status,
    };
  }

  async function expectSamePayload(sessionId: string) {
    const [session]: CheckoutSessionRow[] = await db().query(`${SELECT_CHECKOUT} WHERE cs.id = $1`, [sessionId]);
    const expected = expectedResult(session, await app.get(PaymentsRepository).ofSession(db().manager, sessionId));
    const before = Date.now();
    const [row] = await db().query(
      `SELECT checkout_result_payload($3, $2)::text AS text, ($1::jsonb - 'timestamp')::text AS expected_stored,
         (checkout_result_payload($3, $2)::jsonb - 'timestamp')::text AS stored`,
      [expected, sessionId, merchant.clientId],
    );
    const status = await checkoutStatus(app, merchant, session.merchant_transaction_id);
    const after = Date.now();
    expect(row.stored).toBe(row.expected_stored);
    // The function's json keeps its keys' order: as JSON.stringify writes it, it is the status query's body byte for byte.
    for (const text of [JSON.stringify(JSON.parse(row.text)), status.text]) {
      const { timestamp } = JSON.parse(text);
      expect(text).toBe(JSON.stringify({ ...expected, timestamp }));
      expect(timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(timestamp)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(timestamp)).toBeLessThanOrEqual(after + 1000);
    }
    return JSON.parse(row.text);
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
  ] as Array<[string, number, SessionPaymentSpec[]]>)('%s', async (_name, status, payments) => {
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
