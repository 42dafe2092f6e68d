import { DataSource } from 'typeorm';
import { RailHealth } from '../../src/rails/rail-health';
import { loadRailsConfig } from '../../src/rails/rails-config';

/**
 * The circuit's cost on the money path: a healthy rail's calls write nothing but a "last success" every 30 s, and
 * acceptance reads the shared state at most once a second. A stand-in database counts the statements.
 */
describe('rail health: what the money path pays', () => {
  let statements: string[];
  let health: RailHealth;

  // The clock stands still: the counts below are per second of reads and per 30 s of writes, however slow the machine.
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(Date.now()));
  afterEach(() => jest.restoreAllMocks());

  beforeEach(() => {
    statements = [];
    let row: Record<string, unknown> | null = null;
    const db = {
      query: async (sql: string) => {
        statements.push(sql.trim().split(/\s+/)[0]);
        if (sql.trim().startsWith('SELECT')) return row ? [row] : [];
        const failed = sql.includes('consecutive_failures + 1');
        row = {
          rail: 'mpesa',
          consecutive_failures: failed ? Number(row?.consecutive_failures ?? 0) + 1 : 0,
          opened_at: null,
          open_until: null,
          last_success_at: failed ? (row?.last_success_at ?? null) : new Date(),
          last_failure_at: failed ? new Date() : null,
          last_error: null,
        };
        return [row];
      },
    } as unknown as DataSource;
    const rails = loadRailsConfig({ RAIL_MOBILE_MONEY: 'sandbox' }, 'sandbox', 'http://x', () => Buffer.alloc(0));
    health = new RailHealth(db, { ...rails, mobileMoney: 'mpesa' });
  });

  it('a thousand successful calls and acceptances on a healthy rail cost one read and one write', async () => {
    const circuit = health.circuit('mpesa');
    for (let i = 0; i < 1000; i += 1) {
      expect(await circuit.admits()).toBe(true);
      await circuit.succeeded();
      expect(await health.refusal('mpesa')).toBeNull();
    }
    expect(statements).toEqual(['SELECT', 'INSERT']);
  });

  it('a success after a failure is written, so the failures in a row start again', async () => {
    const circuit = health.circuit('mpesa');
    await circuit.succeeded();
    await circuit.failed('Daraja did not answer');
    await circuit.succeeded();
    await circuit.succeeded();
    expect(statements).toEqual(['SELECT', 'INSERT', 'INSERT', 'INSERT']);
  });
});
