import Decimal from 'decimal.js';
import { OPERATOR_STATEMENTS, OperatorStatement, OurMovement } from '../../../src/rails/operator-statement';
import { StubTransaction } from '../../support/daraja-stub';
import { MpesaSandbox, startMpesaSandbox } from '../../support/mpesa-fixtures';

/**
 * Issue 33: what M-Pesa says it moved, read through its documented calls against the Daraja stub: Pull Transactions
 * (every page, faults surfaced), Transaction Status for payouts Pull does not list, Account Balance on its result
 * callback (late, missing, timed out).
 */
describe('M-Pesa operator statement (Daraja stub)', () => {
  let sandbox: MpesaSandbox;
  let statement: OperatorStatement;
  const now = Date.now();
  const period = { from: new Date(now - 3600_000), to: new Date(now + 3600_000) };
  const nairobi = (at: number) => new Date(at + 3 * 3600_000).toISOString().slice(0, 19) + '.000+03:00';
  const row = (id: string, amount: string | number, minutesAgo: number, bill = `P${id}`) => ({
    row: {
      transactionId: id,
      trxDate: nairobi(now - minutesAgo * 60_000),
      msisdn: 254722000000,
      sender: 'UNKNOWN',
      transactiontype: 'c2b-pay-bill-debit',
      billreference: bill,
      amount,
      organizationname: 'Paygate',
    },
  });

  beforeAll(async () => {
    // A call is bounded apart from the result's wait: what these tests time out on is the result, never the call.
    sandbox = await startMpesaSandbox({
      MPESA_RESULT_WAIT_MS: '1500',
      MPESA_TIMEOUT_MS: '10000',
      MPESA_PULL_NOMINATED_NUMBER: '0722000000',
    });
    statement = (sandbox.app.get(OPERATOR_STATEMENTS) as OperatorStatement[]).find((s) => s.rail === 'mpesa')!;
  });
  afterAll(async () => sandbox?.close());
  beforeEach(() => {
    sandbox.stub.pullRows = [];
    sandbox.stub.pullFaults.clear();
    sandbox.stub.balanceCallback = 'once';
    sandbox.stub.balanceDelayMs = 0;
  });

  it('registers once, then reads every Pull page as documented, keeping duplicates and rows we never sent, amounts exact', async () => {
    sandbox.stub.pullRows = [row('QA1', '100.00', 10), row('QA2', 250, 20), row('QA2', 250, 20), row('QA3', '1000000000000.01', 30, '')];
    const movements = await statement.movements(period, []);
    expect(sandbox.stub.sent('PULL_REGISTER')).toBe(1);
    const register = sandbox.stub.calls.find((c) => c.operation === 'PULL_REGISTER')!.body;
    expect(register).toMatchObject({ ShortCode: '174379', RequestType: 'Pull', NominatedNumber: '0722000000' });
    const queries = sandbox.stub.calls.filter((c) => c.operation === 'PULL_QUERY').map((c) => c.body);
    expect(queries.map((q) => q.OffSetValue)).toEqual(['0', '2', '4']);
    expect(queries[0]).toMatchObject({ ShortCode: '174379' });
    expect(queries[0].StartDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(movements.map((m) => [m.operatorReference, m.amount.toFixed(), m.direction, m.ourReference])).toEqual([
      ['QA1', '100', 'IN', 'PQA1'],
      ['QA2', '250', 'IN', 'PQA2'],
      ['QA2', '250', 'IN', 'PQA2'],
      ['QA3', '1000000000000.01', 'IN', null],
    ]);
    expect(movements[0].counterparty).toBe('254722000000');
    await statement.movements(period, []);
    expect(sandbox.stub.sent('PULL_REGISTER')).toBe(1);
  });

  it('fails the listing when a page errs or never answers, never returning the pages before it', async () => {
    sandbox.stub.pullRows = [row('QB1', '10', 5), row('QB2', '11', 5), row('QB3', '12', 5)];
    sandbox.stub.pullFaults.set(2, 'http500');
    await expect(statement.movements(period, [])).rejects.toThrow(/HTTP 500/);
    sandbox.stub.pullFaults.set(2, 'error');
    await expect(statement.movements(period, [])).rejects.toThrow(/500\.003\.02/);
  });

  it('lists a late row on the query after it appears', async () => {
    sandbox.stub.pullRows = [row('QC1', '10', 5), { ...row('QC2', '20', 5), fromQuery: sandbox.stub.pullListings + 2 }];
    expect((await statement.movements(period, [])).map((m) => m.operatorReference)).toEqual(['QC1']);
    expect((await statement.movements(period, [])).map((m) => m.operatorReference)).toEqual(['QC1', 'QC2']);
  });

  it('refuses a period Pull Transactions cannot reach (older than 48 hours)', async () => {
    await expect(statement.movements({ from: new Date(now - 49 * 3600_000), to: new Date(now - 47 * 3600_000) }, [])).rejects.toThrow(
      /48 hours/,
    );
  });

  it('confirms each payout of ours by Transaction Status: paid as M-Pesa says, unknown ones absent', async () => {
    const paid: StubTransaction = {
      operation: 'B2C',
      body: { Amount: 1500 },
      conversationId: 'AG_1',
      originatorConversationId: '5b0b6d5e-0000-4000-8000-000000000001',
      checkoutRequestId: 'x',
      merchantRequestId: 'x',
      resultCode: '0',
      receipt: 'QPAID00001',
      plan: {},
    };
    sandbox.stub.transactions.push(paid);
    const ours = (reference: string, receipt: string | null): OurMovement => ({
      kind: 'PAYOUT',
      recordId: reference,
      clientId: '1',
      ourReference: reference,
      operatorReference: receipt,
      counterparty: '254708374149',
      amount: new Decimal('1500'),
      currency: 'KES',
      direction: 'OUT',
      status: 'SUCCEEDED',
      at: new Date(now),
    });
    const before = sandbox.stub.sent('STATUS');
    const movements = await statement.movements(period, [
      ours(paid.originatorConversationId, null),
      ours('5b0b6d5e-0000-4000-8000-000000000002', null),
    ]);
    const queries = sandbox.stub.calls.filter((c) => c.operation === 'STATUS').slice(before);
    expect(queries).toHaveLength(2);
    expect(queries[0].body).toMatchObject({ CommandID: 'TransactionStatusQuery', PartyA: '600996', IdentifierType: '4' });
    expect(movements).toHaveLength(1);
    expect(movements[0]).toMatchObject({ operatorReference: 'QPAID00001', direction: 'OUT', status: 'SUCCEEDED' });
    expect(movements[0].amount.toFixed()).toBe('1500');
  });

  it('reports the balance from the result callback, summed exactly over both shortcodes', async () => {
    sandbox.stub.balanceValue = 'Working Account|KES|0.10|0.10|0.00|0.00&Utility Account|KES|228037.20|228037.20|0.00|0.00';
    sandbox.stub.balanceDelayMs = 300;
    const balance = await statement.balance();
    expect(sandbox.stub.sent('BALANCE')).toBeGreaterThanOrEqual(2);
    expect(balance.currency).toBe('KES');
    expect(balance.amount.toFixed()).toBe('456074.6');
  });

  it('fails the balance when its result never comes, or comes as a queue time-out', async () => {
    sandbox.stub.balanceCallback = 'never';
    await expect(statement.balance()).rejects.toThrow(/did not post the result/);
    sandbox.stub.balanceCallback = 'timeout';
    await expect(statement.balance()).rejects.toThrow(/queue time-out/);
  });
});
