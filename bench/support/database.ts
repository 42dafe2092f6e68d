/** A database of the benchmark's own: named, created and migrated, kept vacuumed, dropped. */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { log, ROOT, SERVER_URL } from './environment';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface BenchDatabase {
  name: string;
  url: string;
}

/** A name and URL for a database of the benchmark's own on the server of DATABASE_URL (not created yet). */
export function newBenchDatabase(prefix = 'paygate_bench'): BenchDatabase {
  const name = `${prefix}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  return { name, url: withDatabase(SERVER_URL, name) };
}

/**
 * Creates the database on the server of `admin` and migrates it with the compiled migrations (dist/ is built first
 * when stale). When the server runs without autovacuum, a stand-in keeps the database's statistics and dead rows as
 * autovacuum would (autovacuumStandIn).
 */
export async function createBenchDatabase(admin: Client, database: BenchDatabase): Promise<void> {
  log(`creating database ${database.name}`);
  await admin.query(`CREATE DATABASE ${database.name}`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require(join(ROOT, 'scripts', 'migrate.js')); // builds dist/ first when sources are newer
  await migrate(database.url);
  const [{ setting }] = (await admin.query(`SELECT setting FROM pg_settings WHERE name = 'autovacuum'`)).rows;
  if (setting === 'off' && STAND_IN_NAPTIME_S > 0) standIns.set(database.name, await autovacuumStandIn(database.url));
}

const standIns = new Map<string, () => Promise<void>>();
const STAND_IN_NAPTIME_S = Number(process.env.BENCH_AUTOVACUUM_NAPTIME ?? 10);

/**
 * Production runs Postgres with autovacuum; this machine's CI configuration turns it off. Without it the tables a
 * benchmark fills from empty are never analysed and plans keep the shapes chosen for empty tables (the payments
 * lookup by id went through the client index and read every payment of the run), a cost no production server pays.
 * Every BENCH_AUTOVACUUM_NAPTIME seconds (10; 0 turns the stand-in off) this applies autovacuum's thresholds at
 * their defaults: VACUUM a table when its dead rows pass 50 + 20 % of its rows, ANALYZE it when its changes since
 * the last analysis pass 50 + 10 %, throttled at autovacuum's cost delay. Answers the function that stops it.
 */
async function autovacuumStandIn(url: string): Promise<() => Promise<void>> {
  const db = new Client({ connectionString: url, application_name: 'bench autovacuum stand-in' });
  await db.connect();
  await db.query(`SET vacuum_cost_delay = '2ms'`);
  await db.query('SET vacuum_cost_limit = 200');
  const naptimeMs = STAND_IN_NAPTIME_S * 1000;
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();
  const runPass = async () => {
    const { rows } = await db.query(
      `SELECT * FROM (
         SELECT format('%I.%I', s.schemaname, s.relname) AS name,
                s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0) AS vacuum,
                s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0) AS analyze
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE c.relkind = 'r'
       ) t WHERE t.vacuum OR t.analyze`,
    );
    for (const t of rows as { name: string; vacuum: boolean; analyze: boolean }[]) {
      if (stopped) return;
      await db.query(t.vacuum ? `VACUUM (SKIP_LOCKED${t.analyze ? ', ANALYZE' : ''}) ${t.name}` : `ANALYZE (SKIP_LOCKED) ${t.name}`);
    }
  };
  const timer = setInterval(() => {
    pass = pass.then(runPass).catch((e) => log(`autovacuum stand-in: ${e.message}`));
  }, naptimeMs);
  timer.unref();
  log(`the server runs without autovacuum: a stand-in vacuums and analyses this database every ${naptimeMs / 1000} s`);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await pass;
    await db.end().catch(() => undefined);
  };
}

/** Drops the database (closing whatever is still connected), unless BENCH_KEEP_DATABASE is set. */
export async function dropBenchDatabase(admin: Client, name: string): Promise<void> {
  await standIns.get(name)?.();
  standIns.delete(name);
  if (process.env.BENCH_KEEP_DATABASE) return;
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) => log(`could not drop ${name}: ${e.message}`));
  log(`dropped database ${name}`);
}

export async function count(db: Client, table: string): Promise<number> {
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows;
  return n;
}
