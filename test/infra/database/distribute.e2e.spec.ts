import { Client, type PoolClient } from 'pg';
import { distribute, DistributionRefused } from '../../../src/infra/database/distribute';
import { DISTRIBUTION_PLAN } from '../../../src/infra/database/distribution-plan';
import { runCli } from '../../support/disbursement-fixtures';

jest.setTimeout(180_000);

/** What distributing changes: the foreign keys it drops and re-adds, and the tables Citus places. */
async function shape(db: Client): Promise<{ foreignKeys: string[]; placed: string[] }> {
  const { rows: keys } = await db.query<{ key: string }>(
    `SELECT conrelid::regclass || '.' || conname || ' ' || pg_get_constraintdef(oid) AS key
       FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY 1`,
  );
  const citus = (await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`)).rowCount === 1;
  const placed = citus
    ? (await db.query<{ name: string }>(`SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition ORDER BY 1`)).rows
    : [];
  return { foreignKeys: keys.map((k) => k.key), placed: placed.map((p) => p.name) };
}

describe('db:distribute (docs/scaling.md)', () => {
  it('refuses a database that is no Citus coordinator, in one line, and changes nothing', async () => {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const before = await shape(db);
      expect(before.foreignKeys.length).toBeGreaterThan(50);
      const result = await runCli(process.env.DATABASE_URL!, 'db:distribute', '--json');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('not a Citus coordinator')]);
      expect(await shape(db)).toEqual(before);
    } finally {
      await db.end();
    }
  });

  // A migrated database on a Citus coordinator with its workers added (docs/scaling.md, "On a real Citus cluster").
  const citusUrl = process.env.CITUS_DATABASE_URL;
  (citusUrl ? it : it.skip)(
    'on a Citus coordinator (CITUS_DATABASE_URL; skipped without it), places every table of the plan, or refuses and leaves the database as it was',
    async () => {
      const db = new Client({ connectionString: citusUrl });
      await db.connect();
      try {
        const before = await shape(db);
        try {
          const summary = await distribute(db as unknown as PoolClient);
          const placed = (await shape(db)).placed.sort();
          expect(placed).toEqual([...DISTRIBUTION_PLAN.distributed, ...DISTRIBUTION_PLAN.reference].sort());
          expect(summary.foreign_keys_restored).toBeGreaterThanOrEqual(0);
          // Run again: nothing is left to do.
          const again = await distribute(db as unknown as PoolClient);
          expect([again.reference_tables, again.distributed_tables, again.functions, again.functions_copied]).toEqual([[], [], [], []]);
        } catch (error) {
          if (!(error instanceof DistributionRefused)) throw error;
          expect(await shape(db)).toEqual(before);
        }
      } finally {
        await db.end();
      }
    },
  );
});
