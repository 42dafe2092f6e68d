import { Client, type PoolClient } from 'pg';
import { distribute } from '../../src/infra/database/distribute';

/**
 * TEST_CITUS_WORKERS (`host:port,host:port`) runs the suite on a Citus cluster: DATABASE_URL names the coordinator's
 * server, and the run's database is made on it and on every worker (same name, same credentials), with the citus
 * extension and the workers added, then, once migrated, distributed by `db:distribute`'s plan. docs/scaling.md says
 * how such a cluster was built here.
 */
export const citusWorkers = (): string[] => (process.env.TEST_CITUS_WORKERS ?? '').split(',').filter((w) => w.trim() !== '');

/** Where a test sees its backends wait: on a cluster they wait on the worker node holding the shard, in a shard's statement. */
export const activityView = (): string => (citusWorkers().length > 0 ? 'citus_stat_activity' : 'pg_stat_activity');

const onServer = (serverUrl: string, hostPort: string, database: string) => {
  const url = new URL(serverUrl);
  url.host = hostPort;
  url.pathname = `/${database}`;
  return url.toString();
};

async function run(url: string, ...statements: [string, unknown[]?][]): Promise<void> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    for (const [sql, values] of statements) await db.query(sql, values);
  } finally {
    await db.end();
  }
}

/**
 * One test file at a time per cluster: Citus syncs shared catalogs (roles) to the workers when a node is added or a
 * table distributed, and two files doing so at once fail with "tuple concurrently updated" (seen on 13.2.2).
 */
async function oneAtATime<T>(serverUrl: string, work: () => Promise<T>): Promise<T> {
  const lock = new Client({ connectionString: onServer(serverUrl, new URL(serverUrl).host, 'postgres') });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(310031)');
    return await work();
  } finally {
    await lock.end();
  }
}

/** Makes the run's database on every worker and joins them to the coordinator's. */
export function prepareCitusDatabase(serverUrl: string, name: string): Promise<void> {
  return oneAtATime(serverUrl, () => prepareOn(serverUrl, name));
}

async function prepareOn(serverUrl: string, name: string): Promise<void> {
  for (const worker of citusWorkers()) {
    await run(onServer(serverUrl, worker, 'postgres'), [`CREATE DATABASE ${name}`]);
    await run(onServer(serverUrl, worker, name), ['CREATE EXTENSION citus']);
  }
  const coordinator = new URL(serverUrl);
  await run(
    onServer(serverUrl, coordinator.host, name),
    ['CREATE EXTENSION citus'],
    ['SELECT citus_set_coordinator_host($1, $2)', [coordinator.hostname, Number(coordinator.port || 5432)]],
    ...citusWorkers().map((worker): [string, unknown[]] => {
      const [host, port] = worker.split(':');
      return ['SELECT citus_add_node($1, $2)', [host, Number(port)]];
    }),
  );
}

/** Distributes the migrated database of the run. */
export function distributeTestDatabase(url: string): Promise<void> {
  return oneAtATime(url, () => distributeOn(url));
}

async function distributeOn(url: string): Promise<void> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const summary = await distribute(db as unknown as PoolClient);
    process.stdout.write(`\nCitus: ${summary.distributed_tables.length} tables distributed on ${summary.workers} workers\n`);
  } finally {
    await db.end();
  }
}

/** Drops the run's database on every worker. */
export async function dropCitusDatabases(serverUrl: string, name: string): Promise<void> {
  for (const worker of citusWorkers()) await run(onServer(serverUrl, worker, 'postgres'), [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
}
