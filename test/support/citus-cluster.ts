import { Client, type PoolClient } from 'pg';
import { distribute } from '../../src/infra/database/distribute';

/**
 * TEST_CITUS_WORKERS (`host:port,host:port`) runs the suite on a Citus cluster: DATABASE_URL names the coordinator's
 * server, and the run's database is made on it and on every worker (same name, same credentials), with the citus
 * extension and the workers added, then, once migrated, distributed by `db:distribute`'s plan. docs/scaling.md says
 * how such a cluster was built here.
 */
export const citusWorkers = (): string[] => (process.env.TEST_CITUS_WORKERS ?? '').split(',').filter((w) => w.trim() !== '');

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

/** Makes the run's database on every worker and joins them to the coordinator's. */
export async function prepareCitusDatabase(serverUrl: string, name: string): Promise<void> {
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
export async function distributeTestDatabase(url: string): Promise<void> {
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
