import { readFileSync } from 'node:fs';
import { JengaClient } from '../../../src/rails/jenga/jenga.client';
import { JengaStatement, STATEMENT_PAGE_SIZE } from '../../../src/rails/jenga/jenga-statement';
import type { RailCircuit } from '../../../src/rails/rail-health';
import { loadRailsConfig } from '../../../src/rails/rails-config';
import { JENGA_PATHS, JENGA_STATEMENT_ROW, JengaStub } from '../../support/jenga-stub';

const closedCircuit: RailCircuit = { admits: async () => true, succeeded: async () => undefined, failed: async () => undefined };

/** Issue 33: Equity's account full statement and balance of our source account, read as Jenga documents them. */
describe('Jenga operator statement (Jenga stub)', () => {
  let stub: JengaStub;
  let statement: JengaStatement;
  // 2026-11-26 as a UTC day: 03:00 to 03:00 the next day in Nairobi.
  const period = { from: new Date('2026-11-26T00:00:00Z'), to: new Date('2026-11-27T00:00:00Z') };
  const row = (serial: number, amount: string, posted: string, type = 'Debit', description = 'PESALINK 000000000042') => ({
    ...JENGA_STATEMENT_ROW,
    reference: `S${serial}`,
    serial: String(serial),
    amount: `@num:${amount}`,
    postedDateTime: posted,
    date: `${posted.slice(0, 10)}T00:00:00.000`,
    type,
    description,
  });

  beforeAll(async () => {
    stub = await new JengaStub().start();
    const config = loadRailsConfig(stub.env(), 'sandbox', 'http://localhost:3000', (path) => readFileSync(path)).jenga!;
    statement = new JengaStatement(config, new JengaClient(config, 2000, closedCircuit));
  });
  afterAll(async () => stub.close());
  beforeEach(() => {
    stub.statementRows = [];
    stub.statementFaults.clear();
    stub.calls.length = 0;
  });

  it('reads every page, signed as documented, with amounts exact, directions and Nairobi times read, rows outside the period left out', async () => {
    const rows = Array.from({ length: STATEMENT_PAGE_SIZE + 3 }, (_, i) => row(i + 1, '1500.00', '2026-11-26T12:00:00'));
    rows[0] = row(1, '1000000000000.01', '2026-11-26T02:59:59'); // 25 Nov 23:59:59 UTC: before the period
    rows[1] = row(2, '0.01', '2026-11-26T03:00:00', 'Credit', 'TRANSFER IN');
    stub.statementRows = rows;
    const movements = await statement.movements(period);
    const calls = stub.calls.filter((c) => c.path === JENGA_PATHS.statement);
    expect(calls).toHaveLength(2);
    expect(calls[0].body).toMatchObject({
      countryCode: 'KE',
      accountNumber: JengaStub.CREDENTIALS.JENGA_SOURCE_ACCOUNT_NUMBER,
      fromDate: '2026-11-26',
      toDate: '2026-11-27',
      limit: STATEMENT_PAGE_SIZE,
    });
    const last = rows[STATEMENT_PAGE_SIZE - 1];
    expect(calls[1].body).toMatchObject({ reference: last.reference, serial: last.serial, postedDateTime: last.postedDateTime });
    expect(stub.badSignatures).toEqual([]);
    expect(movements).toHaveLength(STATEMENT_PAGE_SIZE + 2);
    expect(movements[0]).toMatchObject({ operatorReference: 'S2', direction: 'IN', ourReference: null });
    expect(movements[0].amount.toFixed()).toBe('0.01');
    expect(movements[0].at.toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(movements[1]).toMatchObject({ operatorReference: 'S3', direction: 'OUT', ourReference: '000000000042', status: 'SUCCEEDED' });
    expect(movements[1].amount.toFixed(2)).toBe('1500.00');
  });

  it('keeps duplicates as Jenga lists them', async () => {
    stub.statementRows = [row(1, '10', '2026-11-26T12:00:00'), row(1, '10', '2026-11-26T12:00:00')];
    expect((await statement.movements(period)).map((m) => m.operatorReference)).toEqual(['S1', 'S1']);
  });

  it('fails the listing when a later page fails or never answers, never returning the first page alone', async () => {
    stub.statementRows = Array.from({ length: STATEMENT_PAGE_SIZE + 1 }, (_, i) => row(i + 1, '1', '2026-11-26T12:00:00'));
    stub.statementFaults.set(2, 'http500');
    await expect(statement.movements(period)).rejects.toThrow(/HTTP 500/);
    stub.statementFaults.set(2, 'timeout');
    await expect(statement.movements(period)).rejects.toThrow(/did not answer/);
  });

  it("reports the account's Current balance exactly, signed as documented", async () => {
    stub.currentBalance = '997382.57';
    const balance = await statement.balance();
    expect(balance.amount.toFixed()).toBe('997382.57');
    expect(balance.currency).toBe('KES');
    expect(stub.badSignatures).toEqual([]);
  });
});
