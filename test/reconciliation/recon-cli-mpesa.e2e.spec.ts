import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { StubTransaction } from '../support/daraja-stub';
import {
  cliJson,
  createPayoutMerchant,
  mobilePayoutBody,
  PAYOUT_PATHS,
  runCli,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';
import { chargeBody, gateway, GatewayMerchant, waitForPaymentStatus } from '../support/gateway-fixtures';
import { MpesaSandbox, startMpesaSandbox, stubTransaction } from '../support/mpesa-fixtures';
import { dataSource } from '../support/test-app';

/**
 * `recon:run --rail mpesa` as a person runs it (issue 33), through the real M-Pesa adapter against the Daraja stub:
 * Pull Transactions lists the shortcode's payments as M-Pesa does (its transactionId the receipt, its billreference
 * the AccountReference our STK push sent), Transaction Status confirms the B2C payout by what we hold of it, and
 * Account Balance answers on its result callback, which the api receives and the CLI awaits. The stub's faults are
 * M-Pesa's: a page that fails, a row listed late, a row listed twice, a row we never sent, an amount a cent off.
 */
describe('recon:run against the Daraja stub', () => {
  jest.setTimeout(300_000);

  let sandbox: MpesaSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  const now = Date.now();
  const period = ['--from', new Date(now - 3_600_000).toISOString(), '--to', new Date(now + 3_600_000).toISOString()];

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    // Our own status queries wait an hour: a callback the stub never posts stays unasked until the run asks.
    sandbox = await startMpesaSandbox({ MPESA_RESULT_WAIT_MS: '5000', RAIL_RECONCILE_AFTER_MS: '3600000' });
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '10000' });
  }, 120_000);
  afterAll(async () => sandbox?.close());

  const recon = (...args: string[]) => runCli(sandbox.db.url, 'recon:run', '--rail', 'mpesa', ...period, '--json', ...args);
  const show = async (runId: string) =>
    (cliJson(await runCli(sandbox.db.url, 'recon:show', '--id', runId, '--all', '--json')) as { rows: Record<string, any>[] }).rows;
  /** M-Pesa's Pull row of an STK push it completed ("Pull Transactions" response), listed from its `fromQuery`th listing on. */
  const pulled = (t: StubTransaction, overrides: Record<string, unknown> = {}, fromQuery?: number) => ({
    row: {
      transactionId: t.receipt,
      trxDate: new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 19) + '.000+03:00',
      msisdn: Number(t.body.PhoneNumber),
      sender: 'UNKNOWN',
      transactiontype: 'c2b-pay-bill-debit',
      billreference: t.body.AccountReference,
      amount: t.body.Amount,
      organizationname: 'Paygate',
      ...overrides,
    },
    fromQuery,
  });

  async function charge(amount: string) {
    const body = chargeBody(merchant, { amount });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    const id = String(res.body.charge_request_id);
    return { id, t: await stubTransaction(sandbox.stub, (b) => b.AccountReference === `P${id}`.slice(0, 12)) };
  }

  it('finds every fault, settles the lost callback by asking, closes the late row on a rerun, and balances through the result callback', async () => {
    const [matched, listedTwice, centOff, late] = [await charge('101'), await charge('102'), await charge('103'), await charge('104')];
    for (const c of [matched, listedTwice, centOff, late]) await waitForPaymentStatus(app, merchant, c.id, 700);
    sandbox.stub.plan = (operation) => (operation === 'STK_PUSH' ? { callback: 'never' } : {});
    const lost = await charge('105');
    sandbox.stub.plan = () => ({});
    const payout = mobilePayoutBody(merchant, 'ok', { sender_amount: '300.00' });
    expect((await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(payout)).status).toBeLessThan(300);
    await waitForPayoutStatus(app, merchant, payout.payout_reference as string, 700);
    const [{ status: lostStatus }] = await dataSource(app).query(`SELECT payment_status AS status FROM payments WHERE id = $1`, [lost.id]);
    expect(lostStatus).toBe(703);

    const stranger = {
      ...pulled(matched.t),
      row: { ...pulled(matched.t).row, transactionId: 'QSTRANGER1', billreference: 'INV-9', amount: 77 },
    };
    sandbox.stub.pullRows = [
      pulled(matched.t),
      pulled(listedTwice.t),
      pulled(listedTwice.t),
      pulled(centOff.t, { amount: '103.01' }),
      pulled(lost.t),
      stranger,
      pulled(late.t, {}, sandbox.stub.pullListings + 3), // the first complete listing is the second
    ];

    // A page that fails: the run is recorded incomplete with M-Pesa's answer, nothing matched, the command fails.
    sandbox.stub.pullFaults.set(2, 'http500');
    const failed = await recon();
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/incomplete: the operator's statement failed: .*HTTP 500/);
    const incomplete = JSON.parse(failed.stdout);
    expect([incomplete.outcome, incomplete.counts]).toEqual(['INCOMPLETE', {}]);
    expect(await show(incomplete.run_id)).toEqual([]);
    sandbox.stub.pullFaults.clear();
    // Each shortcode's accounts as the Account Balance result writes them (summed over both shortcodes).
    sandbox.stub.balanceValue = 'Working Account|KES|0.10|0.10|0.00|0.00&Utility Account|KES|228037.20|228037.20|0.00|0.00';

    const first = cliJson(await recon()) as Record<string, any>;
    expect(first.outcome).toBe('COMPLETE');
    const rows = await show(first.run_id);
    const of = (id: string) => rows.filter((r) => r.our_kind === 'CHARGE' && r.our_record_id === id).map((r) => [r.outcome, r.state]);
    expect(of(matched.id)).toEqual([['MATCHED', null]]);
    expect(of(listedTwice.id)).toEqual([['MATCHED', null]]);
    expect(rows.filter((r) => r.outcome === 'DUPLICATE_AT_OPERATOR').map((r) => [r.operator_reference, r.state])).toEqual([
      [listedTwice.t.receipt, 'OPEN'],
    ]);
    expect(rows.filter((r) => r.our_record_id === centOff.id).map((r) => [r.outcome, r.our_amount, r.operator_amount])).toEqual([
      ['AMOUNT_MISMATCH', '103.0000', '103.0100'],
    ]);
    expect(rows.filter((r) => r.outcome === 'MISSING_AT_US').map((r) => [r.operator_reference, r.operator_amount])).toEqual([
      ['QSTRANGER1', '77.0000'],
    ]);
    expect(of(late.id)).toEqual([['MISSING_AT_OPERATOR', 'OPEN']]);
    // The lost callback: asked by our STK query (never credited from the row), settled, then matched by our reference.
    expect(of(lost.id)).toEqual([['MATCHED', null]]);
    expect(rows.find((r) => r.our_record_id === lost.id)!.evidence.matched_by).toBe('OUR_REFERENCE');
    await waitForPaymentStatus(app, merchant, lost.id, 700);
    expect(sandbox.stub.sent('STK_QUERY')).toBeGreaterThanOrEqual(1);
    // The payout, which Pull does not list, confirmed by Transaction Status by its receipt.
    const paid = rows.filter((r) => r.our_kind === 'PAYOUT');
    expect(paid.map((r) => [r.outcome, r.operator_amount, r.evidence.operator_row.query])).toEqual([
      ['MATCHED', '300.0000', 'TransactionStatus'],
    ]);
    // The balance line from Account Balance of both shortcodes, its result posted to the api and read by the CLI.
    expect(first.balance.currency).toBe('KES');
    expect(first.balance.operator).toBe('456074.6000');
    expect(first.balance.in_flight).toBe('0.0000');
    expect(first.balance.difference).toBe(new Decimal('456074.6').minus(first.balance.ledger).toFixed(4));

    // The late row is listed now: the rerun matches it and closes its difference; nothing is doubled.
    const second = cliJson(await recon()) as Record<string, any>;
    const again = await show(second.run_id);
    expect(again.filter((r) => r.our_record_id === late.id).map((r) => r.outcome)).toEqual(['MATCHED']);
    const closed = rows.find((r) => r.our_record_id === late.id)!;
    const [kept] = await dataSource(app).query(`SELECT state, settled_by FROM reconciliation_rows WHERE id = $1`, [closed.id]);
    expect(kept).toEqual({ state: 'SETTLED', settled_by: `matched (run ${second.run_id})` });
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM reconciliation_rows WHERE state = 'OPEN'`);
    expect(n).toBe(3); // the duplicate, the cent, the stranger
    expect((await verifyLedger(dataSource(app).manager)).flatMap((r) => r.violations)).toEqual([]);
  });
});
