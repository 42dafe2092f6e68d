import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infra/database/data-source';

/**
 * The application's connections keep generic plans for what Postgres caches: the money functions' statements read
 * partitioned tables, and left to choose Postgres planned them afresh on every call (docs/decisions.md, "Generic
 * plans for cached statements"), costed for rows in memory. A PL/pgSQL function run on such a connection inherits
 * the settings.
 */
describe('the application data source', () => {
  it('runs every pooled connection, and the functions called on it, with generic plans costed for rows in memory', async () => {
    const db = new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 2));
    await db.initialize();
    try {
      const settings = await Promise.all(
        [0, 1].map(async () => {
          const runner = db.createQueryRunner();
          try {
            await runner.connect();
            const [{ mode }] = await runner.query(
              `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('random_page_cost') AS mode`,
            );
            await runner.query(
              `CREATE FUNCTION pg_temp.plan_mode() RETURNS text LANGUAGE plpgsql
                AS $$ BEGIN RETURN current_setting('plan_cache_mode') || ' ' || current_setting('random_page_cost'); END $$`,
            );
            const [{ inside }] = await runner.query(`SELECT pg_temp.plan_mode() AS inside`);
            return [mode, inside];
          } finally {
            await runner.release();
          }
        }),
      );
      const both = 'force_generic_plan 1.1';
      expect(settings).toEqual([
        [both, both],
        [both, both],
      ]);
    } finally {
      await db.destroy();
    }
  });
});
