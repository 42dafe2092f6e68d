import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { pgPool } from '../../src/infra/database/prepared';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { PaymentSettlementService } from '../../src/collections/payment-settlement.service';
import { checkoutStatus, entryCount, initiateCheckout, plus } from '../support/collections-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  startIsolatedSandbox,
  systemBalance,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

const SUCCEEDS = '254712345678';
const FAILS = '254700000001';
const JAMS = '254700000003';

interface Delivery {
  event: string;
  url: string;
  payload: Record<string, any>;
}

/**
 * A hosted checkout's payments settle in the grouped call of direct charges (collection_settle_payments), and
 * their sessions move there too, once per group, with the checkout callback built in SQL. The settlement jobs are
 * due in an hour, so only the settlements this test starts run. The pay endpoint takes one payment at a time; to
 * have several payments of one session under way, a test puts the session back to unpaid between two payments.
 */
describe('settling checkout payments in groups', () => {
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

  /** A checkout of `amount` with one pending payment per entry of `payments` (payer number, amount). */
  async function checkoutWithPayments(amount: number, payments: Array<[string, number]>) {
    const checkout = await initiateCheckout(app, merchant, sandbox.receiver, { amount });
    for (const [msisdn, part] of payments) {
      const res = await request(app.getHttpServer()).post(`/checkout/${checkout.reference}/pay`).send({ msisdn, amount: part });
      expect(res.status).toBe(200);
      // The page allows one payment at a time: reopen the session so the payer can start another.
      await db().query(`UPDATE checkout_sessions SET status = 803 WHERE checkout_reference = $1`, [checkout.reference]);
    }
    await db().query(`UPDATE checkout_sessions SET status = 851 WHERE checkout_reference = $1`, [checkout.reference]);
    const [session] = await db().query(`SELECT id FROM checkout_sessions WHERE checkout_reference = $1`, [checkout.reference]);
    const rows: Array<{ id: string }> = await db().query(`SELECT id FROM payments WHERE checkout_session_id = $1 ORDER BY id`, [
      session.id,
    ]);
    return { ...checkout, sessionId: String(session.id), paymentIds: rows.map((r) => String(r.id)) };
  }

  async function charge(amount: string): Promise<{ id: string; reference: string }> {
    const body = chargeBody(merchant, { amount, callback_url: sandbox.receiver.url(`/charge/${randomUUID()}`) });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    return { id: String(res.body.charge_request_id), reference: body.external_reference as string };
  }

  /** Settles every id `copies` times at once (jobs relayed more than once); answers how many grouped calls were made. */
  async function settleTogether(ids: string[], copies = 2): Promise<number> {
    const pool = pgPool(db());
    const query = jest.spyOn(pool, 'query');
    try {
      const all = Array.from({ length: copies }, () => ids).flat();
      await Promise.all(all.map((id) => app.get(PaymentSettlementService).settle(id)));
      return query.mock.calls.filter(([config]) => (config as { name?: string }).name === 'collection_settle_payments').length;
    } finally {
      query.mockRestore();
    }
  }

  async function sessionStatus(sessionId: string): Promise<number> {
    const [row] = await db().query(`SELECT status FROM checkout_sessions WHERE id = $1`, [sessionId]);
    return row.status;
  }

  async function statusesOf(ids: string[]): Promise<number[]> {
    const rows: Array<{ payment_status: number }> = await db().query(
      `SELECT payment_status FROM payments WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [ids],
    );
    return rows.map((r) => r.payment_status);
  }

  async function deliveriesFor(reference: string): Promise<Delivery[]> {
    return db().query(
      `SELECT event, url, payload FROM callback_deliveries WHERE client_id = $1 AND reference = $2 ORDER BY created_at, id`,
      [merchant.clientId, reference],
    );
  }

  /** The session's result as the status query answers it now, without its timestamp. */
  async function checkoutResultNow(mtid: string) {
    const res = await checkoutStatus(app, merchant, mtid);
    expect(res.status).toBe(200);
    const { timestamp: _timestamp, ...rest } = res.body;
    return rest;
  }

  async function expectLedgerSound() {
    const violations = (await verifyLedger(db().manager)).filter((r) => r.violations.length > 0);
    expect(violations).toEqual([]);
  }

  it('two payments of one session and a direct charge in one group: both counted, the session paid once with one callback', async () => {
    const checkout = await checkoutWithPayments(1000, [
      [SUCCEEDS, 400],
      ['254712345679', 600],
    ]);
    const direct = await charge('250');
    const walletBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
    const feesBefore = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const entriesBefore = await entryCount(app, merchant.clientId, 'PAYMENT');

    const ids = [...checkout.paymentIds, direct.id];
    expect(await settleTogether(ids)).toBe(1);

    expect(await statusesOf(ids)).toEqual([700, 700, 700]);
    expect(await sessionStatus(checkout.sessionId)).toBe(801);
    // Each payment its own entry; the merchant bears the FIXED fee of 10 on each.
    expect(await entryCount(app, merchant.clientId, 'PAYMENT')).toBe(entriesBefore + 3);
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(walletBefore, 390, 590, 240));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(plus(feesBefore, 30));

    // The session's only callback (no payment callback for a checkout's payment) lists both payments.
    const deliveries = await deliveriesFor(checkout.mtid);
    expect(deliveries.map((d) => [d.event, d.url])).toEqual([['checkout_801', checkout.body.callback_url]]);
    const { timestamp, ...payload } = deliveries[0].payload;
    expect(timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(payload.status).toBe(801);
    expect(payload.payments.map((p: { transaction_id: string; payment_status: number }) => [p.transaction_id, p.payment_status])).toEqual([
      [checkout.paymentIds[0], 700],
      [checkout.paymentIds[1], 700],
    ]);
    expect(payload).toEqual(await checkoutResultNow(checkout.mtid));
    // The direct charge announces itself as before.
    expect((await deliveriesFor(direct.reference)).map((d) => d.event)).toEqual(['successful_payment']);

    // The merchant receives it, signed and in the checkout shape.
    const [received] = await waitFor('the checkout callback', () => {
      const got = sandbox.receiver.at(checkout.body.callback_url);
      return got.length > 0 ? got : undefined;
    });
    expect(received.body).toMatchObject({ status: 801, merchant_transaction_id: checkout.mtid });
    expect((received.body.payments as unknown[]).length).toBe(2);

    // Replays of the settlement jobs move nothing and announce nothing.
    await settleTogether(ids, 3);
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(walletBefore, 390, 590, 240));
    expect(await entryCount(app, merchant.clientId, 'PAYMENT')).toBe(entriesBefore + 3);
    expect(await deliveriesFor(checkout.mtid)).toHaveLength(1);
    expect(await deliveriesFor(direct.reference)).toHaveLength(1);
    await expectLedgerSound();
  });

  it('each outcome in one group: part paid, failed (unpaid, or expired past its end), jammed without a callback', async () => {
    const partPaid = await checkoutWithPayments(1000, [[SUCCEEDS, 400]]);
    const partAndFailed = await checkoutWithPayments(1000, [
      [SUCCEEDS, 300],
      [FAILS, 200],
    ]);
    const unpaid = await checkoutWithPayments(500, [[FAILS, 500]]);
    const expired = await checkoutWithPayments(500, [[FAILS, 500]]);
    await db().query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.sessionId]);
    const jammed = await checkoutWithPayments(800, [[JAMS, 800]]);
    const walletBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
    const entriesBefore = await entryCount(app, merchant.clientId, 'PAYMENT');

    const checkouts = [partPaid, partAndFailed, unpaid, expired, jammed];
    expect(await settleTogether(checkouts.flatMap((c) => c.paymentIds))).toBe(1);

    expect(await Promise.all(checkouts.map((c) => sessionStatus(c.sessionId)))).toEqual([802, 802, 803, 820, 850]);
    expect(await statusesOf(partAndFailed.paymentIds)).toEqual([700, 701]);
    expect(await statusesOf(jammed.paymentIds)).toEqual([704]);
    // Money for the two successful payments only.
    expect(await entryCount(app, merchant.clientId, 'PAYMENT')).toBe(entriesBefore + 2);
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(walletBefore, 390, 290));

    for (const [checkout, status] of [
      [partPaid, 802],
      [partAndFailed, 802],
      [unpaid, 803],
      [expired, 820],
    ] as const) {
      const deliveries = await deliveriesFor(checkout.mtid);
      expect(deliveries.map((d) => d.event)).toEqual([`checkout_${status}`]);
      const { timestamp: _timestamp, ...payload } = deliveries[0].payload;
      expect(payload).toEqual(await checkoutResultNow(checkout.mtid));
    }
    const [mixed] = await deliveriesFor(partAndFailed.mtid);
    expect(mixed.payload.payments.map((p: { event: string }) => p.event)).toEqual(['successful_payment', 'failed_payment']);
    expect(await deliveriesFor(jammed.mtid)).toEqual([]);

    await settleTogether(checkouts.flatMap((c) => c.paymentIds));
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(walletBefore, 390, 290));
    expect((await deliveriesFor(partPaid.mtid)).length).toBe(1);
    await expectLedgerSound();
  });

  it('a session whose payments settle in separate groups is told after each, as before', async () => {
    const checkout = await checkoutWithPayments(1000, [
      [SUCCEEDS, 400],
      ['254712345679', 600],
    ]);
    await settleTogether([checkout.paymentIds[0]], 1);
    expect(await sessionStatus(checkout.sessionId)).toBe(802);
    await settleTogether([checkout.paymentIds[1]], 1);
    expect(await sessionStatus(checkout.sessionId)).toBe(801);
    const deliveries = await deliveriesFor(checkout.mtid);
    expect(deliveries.map((d) => [d.event, d.payload.payments.length])).toEqual([
      ['checkout_802', 1],
      ['checkout_801', 2],
    ]);
    await expectLedgerSound();
  });
});
