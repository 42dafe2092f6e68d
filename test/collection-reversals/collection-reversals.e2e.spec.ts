import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { archiveHistory } from '../../src/admin/history-archive';
import { verifySignature } from '../support/callback-signature';
import { CollectionReversalsService } from '../../src/collection-reversals/collection-reversals.service';
import { parseMonth } from '../../src/infra/database/partitions';
import { pgPool } from '../../src/infra/database/prepared';
import { OutboxRelay } from '../../src/infra/queue/outbox-relay.service';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../../src/rails/mobile-money.rail';
import { initiateCheckout, ISO_UTC, minus, plus, waitForCheckout } from '../support/collections-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  MerchantReceiver,
  ReceivedCallback,
  startIsolatedSandbox,
  stopRelaying,
  systemBalance,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { drainAccount, fundAccount } from '../support/ledger-fixtures';
import { dataSource as dataSourceOf } from '../support/test-app';
import { createWallet } from '../support/wallet-fixtures';

const SETTLE_DELAY_MS = 500;

const MESSAGES = {
  duplicate: 'Duplicate Reversal Reference',
  invalidPayment: 'Invalid Payment Reference',
  alreadyReversed: 'Transaction Already Reversed',
  notEligible: 'Transaction Not Eligible for Reversal',
};

/**
 * Collection reversals (collection document §2–§4, §6–§7; provider contract §5 "Collection reversal", §10
 * "Collections money"): accepted as pending, processed in the background, the whole payment entry undone (fee
 * included), the payment then reads 702, the result readable by status query and sent to the merchant's configured
 * callback URL. Every rejection uses one of the four documented messages, with the reference.
 */
describe('collection reversals', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  let clientCallbackUrl: string;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS), CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    clientCallbackUrl = receiver.url(`/merchant-events/${randomUUID()}`);
    merchant = await createGatewayMerchant(app, { clientCallbackUrl });
    other = await createGatewayMerchant(app, { clientCallbackUrl: receiver.url(`/other-events/${randomUUID()}`) });
  });
  afterAll(async () => sandbox?.close());

  const gw = (m: GatewayMerchant = merchant) => gateway(app, m.token);
  const reverse = (body: Record<string, unknown>, m: GatewayMerchant = merchant) => gw(m).post('/v1/reversals/initiate').send(body);
  const reversalStatus = (reference: string, m: GatewayMerchant = merchant) =>
    gw(m).get(`/v1/reversals/${encodeURIComponent(reference)}/status`);
  const newReference = () => `rev-${randomUUID()}`;

  /** A charge that reached `status` (700 by default); returns its ids. */
  async function charge(
    options: { amount?: string; msisdn?: string; status?: number; m?: GatewayMerchant; extra?: Record<string, unknown> } = {},
  ) {
    const m = options.m ?? merchant;
    const body = chargeBody(m, {
      amount: options.amount ?? '100',
      payer_msisdn: options.msisdn ?? '254712345678',
      callback_url: receiver.url(),
      description: 'Order R-1',
      ...(options.extra ? { extra_data: options.extra } : {}),
    });
    const res = await gw(m).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    await waitForPaymentStatus(app, m, res.body.charge_request_id, options.status ?? 700);
    return { reference: body.external_reference as string, id: res.body.charge_request_id as number };
  }

  function expectRejected(res: request.Response, reference: string, message: string) {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status_code: 172, status_description: 'Validation Failed', message, reference });
  }

  async function waitForReversal(reference: string, status: string, m: GatewayMerchant = merchant) {
    return waitFor(`reversal ${reference} to be ${status}`, async () => {
      const res = await reversalStatus(reference, m);
      return res.status === 200 && res.body.reversal_status === status ? (res.body as Record<string, unknown>) : undefined;
    });
  }

  it('reverses a successful payment: pending → processing → successful, money back exactly, payment 702, status and callback in the documented shape', async () => {
    const settlementStart = await ledgerBalance(app, merchant.settlementAccountNumber);
    const feeStart = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const inFlightStart = await systemBalance(app, merchant.clientId, 'IN_FLIGHT_MOBILE_MONEY');
    const payment = await charge({ amount: '250.5' });
    // The collection landed: 250.5 less the FIXED fee of 10 in the settlement wallet, the fee in fee income.
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(settlementStart, '240.5'));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(plus(feeStart, 10));

    // The relay holds the reversal's jobs, so each status is read while it holds: pending, processing, successful.
    const startRelaying = await stopRelaying(app);
    const reference = newReference();
    const accepted = await reverse({
      reversal_reference: reference,
      payment_reference: payment.reference,
      reversal_reason: 'Customer returned the goods',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      status_code: 176,
      status_description: expect.any(String),
      reversal_reference: reference,
      reversal_status: 'pending',
      message: expect.any(String),
    });
    expect((await reversalStatus(reference)).body.reversal_status).toBe('pending');
    // One batch relayed: the first step runs; the next waits in the outbox for the operator's delay, unrelayed.
    await app.get(OutboxRelay).relayDue();
    await waitForReversal(reference, 'processing');
    startRelaying();
    const final = await waitForReversal(reference, 'successful');

    expect(Object.keys(final).sort()).toEqual(
      [
        'currency_code',
        'provider_transaction_id',
        'receiver_narration',
        'reversal_amount',
        'reversal_date',
        'reversal_reference',
        'reversal_status',
      ].sort(),
    );
    expect(final).toMatchObject({
      reversal_reference: reference,
      reversal_status: 'successful',
      reversal_amount: '250.5000',
      currency_code: 'KES',
      receiver_narration: 'Order R-1',
    });
    expect(final.provider_transaction_id).toEqual(expect.stringMatching(/\S/));
    expect(final.reversal_date).toMatch(ISO_UTC);

    // The whole payment entry is undone: settlement wallet, fee income and the operator account are back.
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(settlementStart);
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(feeStart);
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe(inFlightStart);

    const paymentStatus = await gw().get(`/v1/transaction/${payment.id}/status`);
    expect(paymentStatus.body.payment_status).toBe('702');

    const callback = await waitFor<ReceivedCallback>('the reversal callback at the configured URL', () =>
      receiver.at(clientCallbackUrl).find((c) => c.body.reversal_reference === reference),
    );
    expect(callback.body).toEqual(final);
    expect(callback.headers.authorization).toBe(
      `Basic ${Buffer.from(`${merchant.callbackUsername}:${merchant.callbackPassword}`).toString('base64')}`,
    );
    expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
    // The result goes to the merchant's configured URL, not to the charge's callback_url.
    expect(receiver.received.filter((c) => c.body.reversal_reference === reference)).toHaveLength(1);
  });

  it('a reversal the settlement wallet cannot cover fails: status and callback say failed, nothing moves, and it can be tried again', async () => {
    const callbackUrl = receiver.url(`/lean-merchant/${randomUUID()}`);
    const lean = await createGatewayMerchant(app, { clientCallbackUrl: callbackUrl });
    const payment = await charge({ m: lean, amount: '100' });
    // The merchant has already paid out what it collected.
    await drainAccount(app, lean.settlementAccountId, '90');
    const feeBefore = await systemBalance(app, lean.clientId, 'FEE_INCOME');
    const reference = newReference();
    expect(
      (await reverse({ reversal_reference: reference, payment_reference: payment.reference, reversal_reason: 'refund' }, lean)).status,
    ).toBe(200);
    const failed = await waitForReversal(reference, 'failed', lean);
    expect(failed).toMatchObject({
      reversal_reference: reference,
      reversal_status: 'failed',
      reversal_amount: '100.0000',
      currency_code: 'KES',
    });
    const callback = await waitFor<ReceivedCallback>('the failed reversal callback', () =>
      receiver.at(callbackUrl).find((c) => c.body.reversal_reference === reference),
    );
    expect(callback.body).toEqual(failed);
    expect(await ledgerBalance(app, lean.settlementAccountNumber)).toBe('0.0000');
    expect(await systemBalance(app, lean.clientId, 'FEE_INCOME')).toBe(feeBefore);
    expect((await gateway(app, lean.token).get(`/v1/transaction/${payment.id}/status`)).body.payment_status).toBe('700');

    // Once the money is back, a new reversal of the same payment goes through.
    await fundAccount(app, lean.settlementAccountId, '90');
    const retry = newReference();
    expect(
      (await reverse({ reversal_reference: retry, payment_reference: payment.reference, reversal_reason: 'refund' }, lean)).status,
    ).toBe(200);
    await waitForReversal(retry, 'successful', lean);
    expect(await ledgerBalance(app, lean.settlementAccountNumber)).toBe('0.0000');
    expect((await gateway(app, lean.token).get(`/v1/transaction/${payment.id}/status`)).body.payment_status).toBe('702');
  });

  it('a refund the operator refuses is re-booked: status failed, money back where it was, one compensating entry', async () => {
    const payment = await charge({ amount: '100' });
    const walletBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
    const feeBefore = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const rail = app.get<MobileMoneyRail>(MOBILE_MONEY_RAIL);
    const refund = rail.refund.bind(rail);
    rail.refund = async () => ({ status: 'FAILED', reason: 'Payer wallet closed (operator)' });
    try {
      const reference = newReference();
      expect(
        (await reverse({ reversal_reference: reference, payment_reference: payment.reference, reversal_reason: 'refund' })).status,
      ).toBe(200);
      expect(await waitForReversal(reference, 'failed')).toMatchObject({ reversal_status: 'failed', provider_transaction_id: null });
    } finally {
      rail.refund = refund;
    }
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(walletBefore);
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(feeBefore);
    const [row] = await dataSourceOf(app).query(
      `SELECT r.entry_id IS NOT NULL AS booked, r.compensation_entry_id IS NOT NULL AS compensated FROM collection_reversals r
       JOIN payments p ON p.client_id = r.client_id AND p.id = r.payment_id WHERE p.id = $1`,
      [payment.id],
    );
    expect(row).toEqual({ booked: true, compensated: true });
    expect((await gw().get(`/v1/transaction/${payment.id}/status`)).body.payment_status).toBe('700');
  });

  it('a payment of an archived month: refused as not eligible, and a reversal accepted before the archive fails with a reason', async () => {
    const early = await charge({ amount: '100' });
    const late = await charge({ amount: '100' });
    const walletBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
    const rail = app.get<MobileMoneyRail>(MOBILE_MONEY_RAIL);
    const settleDelayMs = rail.settleDelayMs.bind(rail);
    // The accepted reversal waits in processing, before its booking, while the months are archived.
    rail.settleDelayMs = () => 600_000;
    const db = await pgPool(dataSourceOf(app)).connect();
    try {
      const lateReference = newReference();
      expect(
        (await reverse({ reversal_reference: lateReference, payment_reference: late.reference, reversal_reason: 'refund' })).status,
      ).toBe(200);
      await waitForReversal(lateReference, 'processing');

      // Both payments booked in May 1999, then that month archived: their postings leave the ledger.
      await db.query(
        `UPDATE postings SET created_at = '1999-05-10T08:00:00Z' WHERE entry_id IN (SELECT entry_id FROM payments WHERE id = ANY ($1))`,
        [[early.id, late.id]],
      );
      expect((await archiveHistory(db, parseMonth('1999-06')!)).map((p) => p.partition)).toContain('archive.postings_1999_05');

      const earlyReference = newReference();
      expectRejected(
        await reverse({ reversal_reference: earlyReference, payment_reference: early.reference, reversal_reason: 'refund' }),
        earlyReference,
        MESSAGES.notEligible,
      );

      const [{ id }] = await dataSourceOf(app).query(`SELECT id FROM collection_reversals WHERE reversal_reference = $1`, [lateReference]);
      await app.get(CollectionReversalsService).advance(id);
      const failed = await waitForReversal(lateReference, 'failed');
      const callback = await waitFor<ReceivedCallback>('the failed reversal callback', () =>
        receiver.at(clientCallbackUrl).find((c) => c.body.reversal_reference === lateReference),
      );
      expect(callback.body).toEqual(failed);
      const [row] = await dataSourceOf(app).query(`SELECT failure_reason, entry_id FROM collection_reversals WHERE id = $1`, [id]);
      expect(row).toEqual({ failure_reason: 'The payment is archived and can no longer be reversed', entry_id: null });
    } finally {
      rail.settleDelayMs = settleDelayMs;
      db.release();
    }
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(walletBefore);
    for (const payment of [early, late]) {
      expect((await gw().get(`/v1/transaction/${payment.id}/status`)).body.payment_status).toBe('700');
    }
  });

  it('Duplicate Reversal Reference: a reversal reference is unique across all reversals of the merchant', async () => {
    const first = await charge();
    const second = await charge();
    const reference = newReference();
    expect((await reverse({ reversal_reference: reference, payment_reference: first.reference, reversal_reason: 'refund' })).status).toBe(
      200,
    );
    expectRejected(
      await reverse({ reversal_reference: reference, payment_reference: second.reference, reversal_reason: 'refund' }),
      reference,
      MESSAGES.duplicate,
    );
    // The same request again is a duplicate too, and the second payment was not touched.
    expectRejected(
      await reverse({ reversal_reference: reference, payment_reference: first.reference, reversal_reason: 'refund' }),
      reference,
      MESSAGES.duplicate,
    );
    await waitForReversal(reference, 'successful');
    expect((await gw().get(`/v1/transaction/${second.id}/status`)).body.payment_status).toBe('700');
  });

  it("Invalid Payment Reference: an unknown reference, and another merchant's payment, are refused alike", async () => {
    const reference = newReference();
    expectRejected(
      await reverse({ reversal_reference: reference, payment_reference: `nope-${randomUUID()}`, reversal_reason: 'refund' }),
      reference,
      MESSAGES.invalidPayment,
    );
    const theirs = await charge({ m: other });
    const mine = newReference();
    expectRejected(
      await reverse({ reversal_reference: mine, payment_reference: theirs.reference, reversal_reason: 'refund' }),
      mine,
      MESSAGES.invalidPayment,
    );
    expect((await gw(other).get(`/v1/transaction/${theirs.id}/status`)).body.payment_status).toBe('700');
    // A rejected request keeps nothing: the reference is still free.
    const own = await charge();
    expect((await reverse({ reversal_reference: mine, payment_reference: own.reference, reversal_reason: 'refund' })).status).toBe(200);
    // Its money moves before the next test reads the settlement wallet.
    await waitForReversal(mine, 'successful');
  });

  it('Transaction Already Reversed: while a reversal is under way and after it succeeded', async () => {
    const payment = await charge();
    const first = newReference();
    expect((await reverse({ reversal_reference: first, payment_reference: payment.reference, reversal_reason: 'refund' })).status).toBe(
      200,
    );
    const during = newReference();
    expectRejected(
      await reverse({ reversal_reference: during, payment_reference: payment.reference, reversal_reason: 'again' }),
      during,
      MESSAGES.alreadyReversed,
    );
    await waitForReversal(first, 'successful');
    const after = newReference();
    expectRejected(
      await reverse({ reversal_reference: after, payment_reference: payment.reference, reversal_reason: 'again' }),
      after,
      MESSAGES.alreadyReversed,
    );
    expect((await reversalStatus(after)).status).toBe(404);
  });

  it('Transaction Not Eligible for Reversal: a failed payment, and a payment whose split settlements were distributed', async () => {
    const settlementBefore = await ledgerBalance(app, merchant.settlementAccountNumber);
    const failed = await charge({ msisdn: '254700000001', status: 701 });
    const r1 = newReference();
    expectRejected(
      await reverse({ reversal_reference: r1, payment_reference: failed.reference, reversal_reason: 'refund' }),
      r1,
      MESSAGES.notEligible,
    );

    const partner = (await createWallet(app, merchant.tenant, { account_name: 'Partner' })).account_number;
    const split = await charge({ amount: '100', extra: { split_settlements: [{ account: partner, amount: '40', reason: 'commission' }] } });
    const ack = await gw()
      .post('/transactions/acknowledge')
      .send({ payment_id: String(split.id), status: 'SUCCESSFUL', narration: 'ok' });
    expect(ack.status).toBe(200);
    const r2 = newReference();
    expectRejected(
      await reverse({ reversal_reference: r2, payment_reference: split.reference, reversal_reason: 'refund' }),
      r2,
      MESSAGES.notEligible,
    );
    // Nothing was undone: the partner keeps its share and the settlement wallet keeps the rest.
    expect(await ledgerBalance(app, partner)).toBe('40.0000');
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(plus(settlementBefore, minus(90, 40)));

    // Still pending with the operator (254700000002): not eligible either.
    const body = chargeBody(merchant, { payer_msisdn: '254700000002', callback_url: receiver.url() });
    expect((await gw().post('/v1/mobile-money/charge').send(body)).status).toBe(200);
    const r3 = newReference();
    expectRejected(
      await reverse({ reversal_reference: r3, payment_reference: body.external_reference, reversal_reason: 'refund' }),
      r3,
      MESSAGES.notEligible,
    );
  });

  it('missing or blank fields are a 400 with status_code 172 and the reference', async () => {
    const payment = await charge();
    const reference = newReference();
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ payment_reference: payment.reference, reversal_reason: 'refund' }, '', /reversal_reference/],
      [{ reversal_reference: reference, reversal_reason: 'refund' }, reference, /payment_reference/],
      [{ reversal_reference: reference, payment_reference: payment.reference }, reference, /reversal_reason/],
      [{ reversal_reference: reference, payment_reference: payment.reference, reversal_reason: '   ' }, reference, /reversal_reason/],
      [{ reversal_reference: reference, payment_reference: 42, reversal_reason: 'refund' }, reference, /payment_reference/],
    ];
    for (const [body, echoed, mention] of cases) {
      const res = await reverse(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        status_code: 172,
        status_description: 'Validation Failed',
        message: expect.stringMatching(mention),
        reference: echoed,
      });
    }
    // None of them used the reference or touched the payment.
    expect((await reversalStatus(reference)).status).toBe(404);
    expect((await gw().get(`/v1/transaction/${payment.id}/status`)).body.payment_status).toBe('700');
  });

  it("is tenant-isolated: another merchant's reversal status is a 404 (status_code 120), and references are per merchant", async () => {
    const payment = await charge();
    const reference = newReference();
    expect((await reverse({ reversal_reference: reference, payment_reference: payment.reference, reversal_reason: 'refund' })).status).toBe(
      200,
    );
    const foreign = await reversalStatus(reference, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ status_code: 120, status_description: 'Transaction not found', message: expect.any(String) });
    expect((await reversalStatus(`unknown-${randomUUID()}`)).status).toBe(404);
    await waitForReversal(reference, 'successful');
    // The other merchant's callback URL hears nothing of it.
    expect(
      receiver.received.filter((c) => c.body.reversal_reference === reference && !c.path.startsWith(new URL(clientCallbackUrl).pathname)),
    ).toEqual([]);
  });

  it('reversing the payment of a hosted checkout turns the checkout to 840', async () => {
    const { mtid, reference: checkoutReference } = await initiateCheckout(app, merchant, receiver, { amount: 500 });
    await request(app.getHttpServer()).post(`/checkout/${checkoutReference}/pay`).send({ msisdn: '254712345678' }).expect(200);
    await waitForCheckout(app, merchant, mtid, 801);
    const reference = newReference();
    expect((await reverse({ reversal_reference: reference, payment_reference: mtid, reversal_reason: 'event cancelled' })).status).toBe(
      200,
    );
    await waitForReversal(reference, 'successful');
    const reversed = await waitForCheckout(app, merchant, mtid, 840);
    expect(reversed.payments).toEqual([expect.objectContaining({ payment_status: 702 })]);
  });
});
