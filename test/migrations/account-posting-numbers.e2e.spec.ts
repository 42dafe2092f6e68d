import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';
import { runMigrations } from '../../src/infra/database/migrate';
import { LEDGER_INVARIANTS } from '../../src/ledger/ledger-invariants';
import { scratchDatabase } from '../support/child-processes';
import { citusWorkers, distributeTestDatabase, dropCitusDatabases, prepareCitusDatabase } from '../support/citus-cluster';

jest.setTimeout(120_000);

const DIR = join(__dirname, '..', '..', 'migrations');

/** The migrations before `number` (or up to it, with `through`), in order. */
function migrations(number: string, through = false): (new () => MigrationInterface)[] {
  return (
    readdirSync(DIR)
      .filter((file) => file.endsWith('.ts') && (through ? file.slice(0, 13) <= number : file.slice(0, 13) < number))
      .sort()
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      .map((file) => Object.values(require(join(DIR, file)) as Record<string, new () => MigrationInterface>)[0])
  );
}

async function migrate(url: string, list: (new () => MigrationInterface)[]): Promise<void> {
  const dataSource = new DataSource({ type: 'postgres', url, migrations: list, migrationsTableName: 'schema_migrations' });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Migration 046 on a database migrated to 045 whose postings were written by ids out of the order they were inserted:
 * each account's postings are numbered in id order (the order they were applied, on one node), its count is their
 * number, and invariant (e) holds on the result. On a Citus cluster (TEST_CITUS_WORKERS) the database at 045 is
 * distributed first, as a cluster that ran 045 is when it takes 046.
 */
describe('migration AccountPostingNumbers (046)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: Client;

  beforeAll(async () => {
    scratch = await scratchDatabase('paygate_m046');
    if (citusWorkers().length > 0) await prepareCitusDatabase(process.env.TEST_SERVER_DATABASE_URL!, scratch.name);
    await migrate(scratch.url, migrations('1763800000046'));
    if (citusWorkers().length > 0) await distributeTestDatabase(scratch.url);
    db = new Client({ connectionString: scratch.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await scratch?.drop();
    if (scratch && citusWorkers().length > 0) await dropCitusDatabases(process.env.TEST_SERVER_DATABASE_URL!, scratch.name);
  });

  it("numbers every account's postings in id order, counts them, and leaves (e) holding", async () => {
    const one = async (sql: string, params: unknown[] = []) => String((await db.query(sql, params)).rows[0].id);
    const clientId = await one(`INSERT INTO clients (code, name) VALUES ('M046', 'M046') RETURNING id`);
    const account = () =>
      one(`INSERT INTO ledger_accounts (client_id, kind, currency) VALUES ($1, 'WALLET', 'KES') RETURNING id`, [clientId]);
    const [a, b, idle] = [await account(), await account(), await account()];
    // Three entries a → b, inserted with ids 30, 10, 20: id order is entry 2, 3, 1.
    for (const [id, amount] of [
      [30, '5'],
      [10, '7'],
      [20, '11'],
    ]) {
      const entry = await one(`INSERT INTO journal_entries (client_id, kind) VALUES ($1, 'WALLET_TRANSFER') RETURNING id`, [clientId]);
      await db.query(
        `INSERT INTO postings (id, entry_id, client_id, account_id, currency, amount, balance_after)
         VALUES ($1, $2, $3, $4, 'KES', -$6::numeric, 0), ($1 + 1, $2, $3, $5, 'KES', $6::numeric, 0)`,
        [id, entry, clientId, a, b, amount],
      );
    }

    await migrate(scratch.url, migrations('1763800000046', true));

    const { rows: postings } = await db.query(
      `SELECT account_id, id::int, account_seq::int FROM postings WHERE client_id = $1 ORDER BY account_id = $2 DESC, account_seq`,
      [clientId, a],
    );
    expect(postings.map((p) => [p.account_id === a ? 'a' : 'b', p.id, p.account_seq])).toEqual([
      ['a', 10, 1],
      ['a', 20, 2],
      ['a', 30, 3],
      ['b', 11, 1],
      ['b', 21, 2],
      ['b', 31, 3],
    ]);
    const { rows: counts } = await db.query(`SELECT id, posting_count::int FROM ledger_accounts WHERE client_id = $1`, [clientId]);
    expect(Object.fromEntries(counts.map((r) => [r.id, r.posting_count]))).toEqual({ [a]: 3, [b]: 3, [idle]: 0 });

    const numbered = LEDGER_INVARIANTS.find((i) => i.name === 'e_postings_numbered_per_account')!;
    expect((await db.query(numbered.sql)).rows).toEqual([]);
  });
});
