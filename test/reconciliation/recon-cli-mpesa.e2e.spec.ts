import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import ExcelJS from 'exceljs';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPORT_COLUMNS } from '../../src/reconciliation/recon-report';
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
    // A person records the account's balance as M-Pesa reported it before the day's movements: the roll-forward's opening.
    const opening = cliJson(
      await runCli(
        sandbox.db.url,
        'recon:opening',
        '--rail',
        'mpesa',
        '--amount',
        '100000.01',
        '--currency',
        'KES',
        '--at',
        new Date(now - 60_000).toISOString(),
        '--note',
        'Account Balance before go-live',
        '--by',
        'alice',
        '--json',
      ),
    ) as Record<string, any>;
    expect([opening.amount, opening.set_by]).toEqual(['100000.0100', 'alice']);
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
    // Each shortcode's accounts as the Account Balance result writes them (summed over both shortcodes): the opening,
    // plus the charges as M-Pesa took them (one a cent more than we hold), less the payout, plus the stranger's 77.
    sandbox.stub.balanceValue = 'Working Account|KES|0.10|0.10|0.00|0.00&Utility Account|KES|50145.91|50145.91|0.00|0.00';

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
    // Rolled forward from the opening by what succeeded (five charges, the lost one settled by the run, less the
    // payout): off by exactly what M-Pesa moved that we did not, the stranger and the cent.
    expect(first.balance).toMatchObject({
      currency: 'KES',
      opening: { amount: '100000.0100', source: `opening ${opening.opening_id}` },
      movements: '215.0000',
      expected: '100215.0100',
      operator: '100292.0200',
      difference: '77.0100',
      in_flight: '0.0000',
    });
    const open = rows.filter((r) => r.state === 'OPEN' && r.outcome !== 'DUPLICATE_AT_OPERATOR');
    const unexplained = open.reduce(
      (sum, r) => sum.plus(r.operator_amount ?? 0).minus(r.operator_amount ? (r.our_amount ?? 0) : 0),
      new Decimal(0),
    );
    expect(unexplained.toFixed(4)).toBe(first.balance.difference);

    // The run's report, CSV and XLSX, read back: one line per difference, with its client, amounts and state.
    const differences = rows.filter((r) => r.outcome !== 'MATCHED');
    const dir = mkdtempSync(join(tmpdir(), 'recon-report-'));
    const written = cliJson(
      await runCli(sandbox.db.url, 'recon:report', '--id', first.run_id, '--format', 'csv', '--out', join(dir, 'run.csv'), '--json'),
    ) as Record<string, any>;
    expect(written.lines).toBe(differences.length);
    const csv = readFileSync(join(dir, 'run.csv'), 'utf8').trimEnd().split('\r\n');
    expect(csv[0].split(',')).toEqual([...REPORT_COLUMNS]);
    expect(csv).toHaveLength(differences.length + 1);
    const centLine = csv.find((line) => line.split(',')[3] === 'AMOUNT_MISMATCH')!.split(',');
    expect([centLine[0], centLine[1], centLine[4], centLine[10], centLine[11], centLine[12]]).toEqual([
      'mpesa',
      first.run_id,
      'OPEN',
      'KES',
      '103.0000',
      '103.0100',
    ]);
    expect(centLine[15]).toContain(merchant.clientCode);
    const report = await runCli(sandbox.db.url, 'recon:report', '--id', first.run_id, '--format', 'xlsx', '--out', join(dir, 'run.xlsx'));
    expect(report.code).toBe(0);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(join(dir, 'run.xlsx'));
    const sheet = book.worksheets[0];
    const values = (n: number) => (sheet.getRow(n).values as ExcelJS.CellValue[]).slice(1);
    expect(values(1)).toEqual([...REPORT_COLUMNS]);
    expect(sheet.rowCount).toBe(differences.length + 1);
    const lines = Array.from({ length: differences.length }, (_, i) => values(i + 2));
    const strangerLine = lines.find((line) => line[3] === 'MISSING_AT_US')!;
    expect([strangerLine[0], strangerLine[4], strangerLine[9], strangerLine[10], strangerLine[12]]).toEqual([
      'mpesa',
      'OPEN',
      'QSTRANGER1',
      'KES',
      77,
    ]);
    const cent = lines.find((line) => line[3] === 'AMOUNT_MISMATCH')!;
    expect([cent[11], cent[12], cent[15]]).toEqual([103, 103.01, merchant.clientCode]);
    expect(lines.map((line) => line[3]).sort()).toEqual(differences.map((r) => r.outcome).sort());

    // The late row is listed now: the rerun matches it and closes its difference; nothing is doubled.
    const second = cliJson(await recon()) as Record<string, any>;
    const again = await show(second.run_id);
    // Nothing moved since the first run's balance: the roll-forward from it is zero.
    expect(second.balance).toMatchObject({ opening: { source: `run ${first.run_id}` }, movements: '0.0000', difference: '0.0000' });
    expect(again.filter((r) => r.our_record_id === late.id).map((r) => r.outcome)).toEqual(['MATCHED']);
    const closed = rows.find((r) => r.our_record_id === late.id)!;
    const [kept] = await dataSource(app).query(`SELECT state, settled_by FROM reconciliation_rows WHERE id = $1`, [closed.id]);
    expect(kept).toEqual({ state: 'SETTLED', settled_by: `matched (run ${second.run_id})` });
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM reconciliation_rows WHERE state = 'OPEN'`);
    expect(n).toBe(3); // the duplicate, the cent, the stranger
    expect((await verifyLedger(dataSource(app).manager)).flatMap((r) => r.violations)).toEqual([]);
  });
});
