import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CallbacksService } from '../../src/callbacks/delivery/callbacks.service';
import { PayoutReconciliationService } from '../../src/payouts/payout-reconciliation.service';
import { PayoutSettlementService } from '../../src/payouts/payout-settlement.service';
import { PAYOUT_RAIL, PayoutOutcome, PayoutRail } from '../../src/rails/payout.rail';
import {
  b2bBody,
  bankPayoutBody,
  cliJson,
  createPayoutMerchant,
  floatBalance,
  mobilePayoutBody,
  PAYOUT_PATHS,
  payoutRow,
  runCli,
  SandboxRow,
} from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant, systemBalance } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

jest.setTimeout(180_000);

/**
 * The payouts core, driven directly (no worker runs in this app): what processing does for each sandbox row, that
 * repeated or crashed processing leaves exactly one outcome per hold, the reconciliation of stuck payouts, and the
 * operator's payout:resolve. Amounts: 100.00 with the service's FIXED fee of 10, so 110.0000 is held per payout.
 */
describe('payout processing', () => {
  let app: NestFastifyApplication;
  let settlement: PayoutSettlementService;
  let rail: PayoutRail;

  beforeAll(async () => {
    app = await createTestApp();
    settlement = app.get(PayoutSettlementService);
    rail = app.get(PAYOUT_RAIL);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    expect(await ledgerViolations(app)).toEqual([]);
    await app.close();
  });

  async function accept(merchant: GatewayMerchant, path: string, body: Record<string, unknown>): Promise<string> {
    const res = await gateway(app, merchant.token).post(path).send(body);
    expect({ status: res.status, code: res.body.response_code }).toEqual({ status: 200, code: 720 });
    const row = await payoutRow(app, merchant.clientId, body.payout_reference as string);
    return String(row!.id);
  }

  async function footprint(merchant: GatewayMerchant, reference: string) {
    const row = await payoutRow(app, merchant.clientId, reference);
    const [counts] = await dataSource(app).query(
      `SELECT (SELECT count(*)::int FROM callback_deliveries WHERE client_id = $1 AND reference = $2) AS callbacks,
              (SELECT count(*)::int FROM notifications WHERE client_id = $1 AND reference = $2) AS sms,
              (SELECT count(*)::int FROM journal_entries WHERE client_id = $1 AND kind IN ('FLOAT_SETTLE', 'FLOAT_RELEASE')) AS outcomes`,
      [merchant.clientId, reference],
    );
    return { status: row!.status, hold: row!.hold_status, ...counts };
  }

  it('ends each sandbox row as the contract says; the hold is settled, returned or kept accordingly', async () => {
    const merchant = await createPayoutMerchant(app, { float: '10000' });
    const cases: Array<{ body: Record<string, unknown>; path: string; status: number; hold: string; callbacks: number; sms: number }> = [];
    const mobile: Array<[SandboxRow, number, string]> = [
      ['ok', 700, 'SETTLED'],
      ['failed', 701, 'RELEASED'],
      ['pending', 703, 'HELD'],
      ['jammed', 704, 'HELD'],
      ['otp', 700, 'SETTLED'],
      ['authorize', 700, 'SETTLED'],
    ];
    for (const [row, status, hold] of mobile) {
      cases.push({
        body: mobilePayoutBody(merchant, row),
        path: PAYOUT_PATHS.local,
        status,
        hold,
        callbacks: status >= 703 ? 0 : 1,
        sms: status === 700 ? 1 : 0,
      });
    }
    for (const [row, status, hold] of [
      ['ok', 700, 'SETTLED'],
      ['failed', 701, 'RELEASED'],
      ['jammed', 704, 'HELD'],
    ] as const) {
      cases.push({
        body: bankPayoutBody(merchant, row),
        path: PAYOUT_PATHS.local,
        status,
        hold,
        callbacks: status >= 703 ? 0 : 1,
        sms: status === 700 ? 1 : 0,
      });
    }
    // B2B: the till/paybill/bank account number decides; no SMS for B2B.
    cases.push({
      body: b2bBody(merchant, { amount: '100.00', recipient_account_number: '0000000001' }),
      path: PAYOUT_PATHS.b2b,
      status: 701,
      hold: 'RELEASED',
      callbacks: 1,
      sms: 0,
    });
    cases.push({
      body: b2bBody(merchant, { amount: '100.00' }),
      path: PAYOUT_PATHS.b2b,
      status: 700,
      hold: 'SETTLED',
      callbacks: 1,
      sms: 0,
    });

    // One group, as a worker claims them: every outcome applied in one transaction.
    const ids: string[] = [];
    for (const c of cases) ids.push(await accept(merchant, c.path, c.body));
    expect(await settlement.process(ids)).toEqual(cases.map((c) => ({ done: true, finished: ![703, 704].includes(c.status) })));

    for (const c of cases) {
      const seen = await footprint(merchant, c.body.payout_reference as string);
      expect({
        reference: c.body.payout_reference,
        status: seen.status,
        hold: seen.hold,
        callbacks: seen.callbacks,
        sms: seen.sms,
      }).toEqual({
        reference: c.body.payout_reference,
        status: c.status,
        hold: c.hold,
        callbacks: c.callbacks,
        sms: c.sms,
      });
    }
    // 12 payouts of 110.0000 reserved; 4 returned, 5 settled (50.0000 fee income), 3 still held.
    expect(await floatBalance(app, merchant)).toEqual({
      balance: '9120.0000',
      currency: 'KES',
      status: 'ACTIVE',
      ledger_balance: '9450.0000',
      reserved_balance: '330.0000',
    });
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('50.0000');
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe('220.0000'); // pending + jammed mobile
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_BANK')).toBe('110.0000'); // jammed bank
  });

  it('processing the same payout again, or twice at once, moves the money once and announces once', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const body = mobilePayoutBody(merchant, 'ok');
    const id = await accept(merchant, PAYOUT_PATHS.local, body);

    const other = await accept(merchant, PAYOUT_PATHS.local, mobilePayoutBody(merchant, 'ok'));
    // Groups overlapping each other (two workers claimed the row twice after a lost lease), and the same id twice in one.
    await Promise.all([settlement.process([id, other]), settlement.process([other, id]), settlement.process([id, id])]);
    await settlement.process([id]);

    expect(await footprint(merchant, body.payout_reference as string)).toEqual({
      status: 700,
      hold: 'SETTLED',
      callbacks: 1,
      sms: 1,
      outcomes: 2, // the client's: one per payout
    });
    expect((await floatBalance(app, merchant)).balance).toBe('780.0000');
  });

  it('a crash after the rail answered and before the commit leaves nothing half done; the re-run gives the one outcome', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const ok = mobilePayoutBody(merchant, 'ok');
    const failed = mobilePayoutBody(merchant, 'failed');
    const okId = await accept(merchant, PAYOUT_PATHS.local, ok);
    const failedId = await accept(merchant, PAYOUT_PATHS.local, failed);

    // The process dies while the result is being announced: the transaction that settled the hold rolls back.
    const submit = jest.spyOn(rail, 'submit');
    const schedule = jest.spyOn(app.get(CallbacksService), 'schedule').mockRejectedValue(new Error('worker killed'));
    // Neither the group nor each payout alone commits: both are left to be tried again.
    expect(await settlement.process([okId, failedId])).toEqual([
      { done: false, finished: false },
      { done: false, finished: false },
    ]);
    schedule.mockRestore();
    expect(await footprint(merchant, ok.payout_reference as string)).toEqual({
      status: 703,
      hold: 'HELD',
      callbacks: 0,
      sms: 0,
      outcomes: 0,
    });
    expect((await floatBalance(app, merchant)).reserved_balance).toBe('220.0000');

    // The retried work submits again (the rail answers the same for the same payout id) and commits once.
    await settlement.process([okId]);
    await settlement.process([failedId]);
    await settlement.process([okId]);
    expect(submit).toHaveBeenCalledTimes(4);
    expect(await footprint(merchant, ok.payout_reference as string)).toEqual({
      status: 700,
      hold: 'SETTLED',
      callbacks: 1,
      sms: 1,
      outcomes: 2,
    });
    expect(await footprint(merchant, failed.payout_reference as string)).toEqual({
      status: 701,
      hold: 'RELEASED',
      callbacks: 1,
      sms: 0,
      outcomes: 2,
    });
    expect(await floatBalance(app, merchant)).toMatchObject({ balance: '890.0000', reserved_balance: '0.0000' });
  });

  it('reconciliation re-asks the rail about overdue pending and jammed payouts and resolves them when it answers', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const pending = mobilePayoutBody(merchant, 'pending');
    const jammed = bankPayoutBody(merchant, 'jammed');
    const pendingId = await accept(merchant, PAYOUT_PATHS.local, pending);
    const jammedId = await accept(merchant, PAYOUT_PATHS.local, jammed);
    await settlement.process([pendingId, jammedId]);
    const reconciliation = app.get(PayoutReconciliationService);
    const afterMs = 60_000; // PAYOUT_RECONCILE_AFTER_MS's sandbox default

    // Not overdue yet: nothing asked.
    const sandboxAnswer = rail.outcomeOf.bind(rail);
    const outcomeOf = jest.spyOn(rail, 'outcomeOf');
    await reconciliation.reconcile(new Date());
    expect(outcomeOf.mock.calls.filter(([p]) => [pendingId, jammedId].includes(p.payoutId))).toHaveLength(0);

    // Overdue, the rail still says pending/jammed: asked, kept (money still held).
    await reconciliation.reconcile(new Date(Date.now() + afterMs + 1000));
    expect(outcomeOf.mock.calls.filter(([p]) => [pendingId, jammedId].includes(p.payoutId))).toHaveLength(2);
    expect((await footprint(merchant, pending.payout_reference as string)).status).toBe(703);
    expect((await footprint(merchant, jammed.payout_reference as string)).status).toBe(704);

    // Now the rail has final answers for these two (and the sandbox's own for every other payout).
    const answers: Record<string, PayoutOutcome> = {
      [pendingId]: { status: 'SUCCEEDED', railReference: 'RAIL-LATE-1' },
      [jammedId]: { status: 'FAILED', reason: 'Bank rejected the account' },
    };
    outcomeOf.mockImplementation(async (p) => answers[p.payoutId] ?? sandboxAnswer(p));
    await reconciliation.reconcile(new Date(Date.now() + 3 * afterMs));

    expect(await footprint(merchant, pending.payout_reference as string)).toMatchObject({
      status: 700,
      hold: 'SETTLED',
      callbacks: 1,
      sms: 1,
    });
    expect(await footprint(merchant, jammed.payout_reference as string)).toMatchObject({
      status: 701,
      hold: 'RELEASED',
      callbacks: 1,
      sms: 0,
    });
    const status = await gateway(app, merchant.token).get(`/v1/payouts/${pending.payout_reference}/status`).expect(200);
    expect(status.body.data).toMatchObject({ payment_status: 700, reference: 'RAIL-LATE-1' });
    expect(await floatBalance(app, merchant)).toMatchObject({ balance: '890.0000', reserved_balance: '0.0000' });
  });

  it('payout:resolve settles or returns a jammed payout by hand (one entry, one callback) and refuses a final one', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const toSettle = mobilePayoutBody(merchant, 'jammed');
    const toReturn = b2bBody(merchant, { amount: '100.00', recipient_account_number: '0000000003' });
    await settlement.process([await accept(merchant, PAYOUT_PATHS.local, toSettle), await accept(merchant, PAYOUT_PATHS.b2b, toReturn)]);
    expect((await floatBalance(app, merchant)).reserved_balance).toBe('220.0000');
    const db = process.env.DATABASE_URL!;

    const settled = cliJson(
      await runCli(
        db,
        'payout:resolve',
        '--client',
        merchant.clientCode,
        '--reference',
        toSettle.payout_reference as string,
        '--status',
        'SUCCESSFUL',
        '--json',
      ),
    );
    expect(settled).toMatchObject({ payout_reference: toSettle.payout_reference, payment_status: 700, hold_status: 'SETTLED' });
    const returned = cliJson(
      await runCli(
        db,
        'payout:resolve',
        '--client',
        merchant.clientCode,
        '--reference',
        toReturn.payout_reference as string,
        '--status',
        'FAILED',
        '--json',
      ),
    );
    expect(returned).toMatchObject({ payout_reference: toReturn.payout_reference, payment_status: 701, hold_status: 'RELEASED' });

    expect(await footprint(merchant, toSettle.payout_reference as string)).toEqual({
      status: 700,
      hold: 'SETTLED',
      callbacks: 1,
      sms: 1,
      outcomes: 2,
    });
    expect(await footprint(merchant, toReturn.payout_reference as string)).toMatchObject({
      status: 701,
      hold: 'RELEASED',
      callbacks: 1,
      sms: 0,
    });
    expect(await floatBalance(app, merchant)).toMatchObject({ balance: '890.0000', reserved_balance: '0.0000' });
    const b2b = await gateway(app, merchant.token).get(`/v1/payouts/b2b/${toReturn.payout_reference}/status`).expect(200);
    expect(b2b.body).toMatchObject({
      payment_status: 701,
      account_balance: '890.0000',
      result_description: 'Failed (resolved by operator)',
    });

    // Already final, unknown, or a bad status: refused with a non-zero exit and one line on stderr, nothing moves.
    for (const args of [
      ['--reference', toSettle.payout_reference as string, '--status', 'FAILED'],
      ['--reference', 'no-such-payout', '--status', 'SUCCESSFUL'],
      ['--reference', toReturn.payout_reference as string, '--status', 'MAYBE'],
    ]) {
      const refused = await runCli(db, 'payout:resolve', '--client', merchant.clientCode, ...args, '--json');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(await footprint(merchant, toSettle.payout_reference as string)).toMatchObject({ status: 700, outcomes: 2 });
    expect((await floatBalance(app, merchant)).balance).toBe('890.0000');
  });
});
