import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import type { OperatorMovement, OperatorStatement, ReconciliationPeriod } from '../../src/rails/operator-statement';
import { ReconciliationRepository } from '../../src/reconciliation/reconciliation.repository';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { createPayoutMerchant, mobilePayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { chargeBody, gateway, GatewayMerchant, IsolatedSandbox, paymentRow, startIsolatedSandbox } from '../support/gateway-fixtures';
import { operatorRowOfCharge } from '../support/recon-fixtures';
import { dataSource } from '../support/test-app';

/**
 * A reconciliation run against an operator's statement (issue 33, items 2 and 3). The statement here is a unit of our
 * own test, not an operator stub: it answers the rows each case needs, so that every outcome, the rerun, the
 * settle-by-query and the resolutions are proven on the real schema and the sandbox's money paths. Charges stay
 * pending (the sandbox settles them only after 10 minutes) until the run asks the operator about them.
 */
describe('reconciliation run', () => {
  jest.setTimeout(180_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let period: ReconciliationPeriod;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '600000' });
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '10000' });
    period = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
  }, 120_000);
  afterAll(async () => sandbox?.close());

  async function charge(amount: string) {
    const body = chargeBody(merchant, { amount });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBeLessThan(300);
    const row = await paymentRow(app, merchant.clientId, body.external_reference as string);
    return row!;
  }

  const row = operatorRowOfCharge;

  const statementOf = (rows: OperatorMovement[], balance = '1000.0000'): OperatorStatement => ({
    rail: 'mpesa',
    movements: async () => rows,
    balance: async () => ({ amount: new Decimal(balance), currency: 'KES', at: new Date(), evidence: { Balance: balance } }),
  });

  const reconcile = (statement: OperatorStatement) => app.get(ReconciliationService).run('mpesa', period, 'test', statement);
  const rowsOf = async (runId: string) => app.get(ReconciliationRepository).rowsOf(runId, false);
  const byRecord = (rows: Awaited<ReturnType<typeof rowsOf>>, id: string) =>
    rows.filter((r) => r.our_kind === 'CHARGE' && r.our_record_id === String(id));

  it('finds every outcome, settles by our status query what it can, never doubles on a rerun, and closes what now matches', async () => {
    const asked = await charge('100'); // pending at us, succeeded at the operator: asked, settled, matched
    const offByACent = await charge('200');
    const notListed = await charge('300');
    const byAmount = await charge('400'); // the operator's row carries neither reference
    const payout = mobilePayoutBody(merchant, 'jammed'); // pending until asked, then jammed: a person's to resolve
    expect((await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(payout)).status).toBeLessThan(300);

    const stranger: OperatorMovement = {
      ...row(asked),
      operatorReference: 'OPSTRANGER',
      ourReference: null,
      counterparty: '254799999999',
      amount: new Decimal('55.0000'),
    };
    const rows = [
      row(asked),
      row(asked), // the same transaction listed twice
      row(offByACent, { amount: new Decimal(offByACent.total_amount).plus('0.01') }),
      row(byAmount, { ourReference: null, operatorReference: 'OPNOREF', at: new Date(new Date(byAmount.created_at).getTime() + 120_000) }),
      stranger,
    ];
    const first = await reconcile(statementOf(rows));
    expect(first.outcome).toBe('COMPLETE');

    const stored = await rowsOf(first.id);
    expect(byRecord(stored, asked.id).map((r) => [r.outcome, r.state])).toEqual([['MATCHED', null]]);
    expect(stored.filter((r) => r.outcome === 'DUPLICATE_AT_OPERATOR').map((r) => r.operator_reference)).toEqual([`OP${asked.id}`]);
    expect(byRecord(stored, offByACent.id).map((r) => [r.outcome, r.our_amount, r.operator_amount])).toEqual([
      ['AMOUNT_MISMATCH', '200.0000', '200.0100'],
    ]);
    expect(byRecord(stored, notListed.id).map((r) => [r.outcome, r.state])).toEqual([['MISSING_AT_OPERATOR', 'OPEN']]);
    expect(byRecord(stored, byAmount.id).map((r) => [r.outcome, r.evidence.matched_by])).toEqual([['MATCHED', 'AMOUNT_AND_TIME']]);
    expect(stored.filter((r) => r.outcome === 'MISSING_AT_US').map((r) => r.operator_reference)).toEqual(['OPSTRANGER']);
    const jammed = stored.find((r) => r.our_kind === 'PAYOUT')!;
    expect([jammed.outcome, jammed.our_status, jammed.state]).toEqual(['MISSING_AT_OPERATOR', 'PENDING', 'OPEN']);

    // Asked, not credited from the statement: the charges our query settled are successful through the settlement path.
    expect((await paymentRow(app, merchant.clientId, asked.external_reference))!.payment_status).toBe(700);
    expect((await paymentRow(app, merchant.clientId, asked.external_reference))!.entry_id).not.toBeNull();
    expect(first.counts.asked).toBeGreaterThanOrEqual(4);
    // The balance line: in flight is the jammed payout's amount and fee, still held; no opening yet, so nothing expected.
    expect([first.in_flight, first.operator_balance, first.opening_balance, first.expected_balance, first.balance_difference]).toEqual([
      '110.0000',
      '1000.0000',
      null,
      null,
      null,
    ]);

    // The same period again: the same rows, none doubled; the balance rolls forward from the first run's, nothing
    // having succeeded since. Then the operator lists the charge it had left out.
    const rerun = await reconcile(statementOf(rows));
    expect([rerun.opening_source, rerun.opening_balance, rerun.period_movements, rerun.balance_difference]).toEqual([
      `run ${first.id}`,
      '1000.0000',
      '0.0000',
      '0.0000',
    ]);
    const again = await rowsOf(rerun.id);
    expect(again.map((r) => r.id).sort()).toEqual(stored.map((r) => r.id).sort());
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM reconciliation_rows`);
    expect(n).toBe(stored.length);

    const caughtUp = await reconcile(statementOf([...rows, row(notListed)]));
    const missing = await app.get(ReconciliationRepository).row(byRecord(stored, notListed.id)[0].id);
    expect([missing!.state, missing!.settled_by]).toEqual(['SETTLED', `matched (run ${caughtUp.id})`]);
    expect(byRecord(await rowsOf(caughtUp.id), notListed.id).map((r) => r.outcome)).toEqual(['MATCHED']);

    // Resolutions: one that moves no money, one that finishes the jammed payout through its own path (one entry).
    const service = app.get(ReconciliationService);
    const strangerRow = stored.find((r) => r.outcome === 'MISSING_AT_US')!;
    const noMoney = await service.resolve(strangerRow.id, 'alice', 'another merchant of the shortcode', null);
    expect([noMoney.state, noMoney.resolved_by, noMoney.resolution_entry_id]).toEqual(['RESOLVED', 'alice', null]);
    await expect(service.resolve(strangerRow.id, 'alice', 'again', null)).rejects.toThrow(/RESOLVED, not open/);
    await expect(service.resolve(jammed.id, 'bob', 'no status', null)).rejects.toThrow(/--status/);

    const paid = await service.resolve(jammed.id, 'bob', 'M-Pesa support: never paid, ticket 123', 'FAILED');
    expect(paid.resolution_entry_id).not.toBeNull();
    const [entry] = await dataSource(app).query(`SELECT kind FROM journal_entries WHERE client_id = $1 AND id = $2`, [
      merchant.clientId,
      paid.resolution_entry_id,
    ]);
    expect(entry.kind).toBe('FLOAT_RELEASE');
    expect((await verifyLedger(dataSource(app).manager)).flatMap((r) => r.violations)).toEqual([]);

    // A resolved difference stays resolved when the period runs again.
    await reconcile(statementOf([...rows, row(notListed)]));
    expect((await app.get(ReconciliationRepository).row(strangerRow.id))!.state).toBe('RESOLVED');
  });

  it('records a run the operator could not answer as incomplete, never as matched', async () => {
    const failing: OperatorStatement = {
      rail: 'mpesa',
      movements: async () => {
        throw new Error('page 2 answered 500');
      },
      balance: async () => ({ amount: new Decimal(0), currency: 'KES', at: new Date(), evidence: {} }),
    };
    const run = await reconcile(failing);
    expect([run.outcome, run.reason]).toEqual(['INCOMPLETE', "the operator's statement failed: page 2 answered 500"]);
    expect(await rowsOf(run.id)).toEqual([]);
  });
});
