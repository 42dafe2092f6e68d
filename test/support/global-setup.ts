import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { citusWorkers, distributeTestDatabase, prepareCitusDatabase } from './citus-cluster';
import { LocalRedisCluster, startRedisCluster } from './redis-cluster';

/** The cluster TEST_REDIS_CLUSTER=1 starts: a global is how Jest lets the teardown see what the set-up made. */
export const testCluster = globalThis as { paygateTestCluster?: LocalRedisCluster };

/**
 * Creates a database of its own for this run on the Postgres named by DATABASE_URL (the server, normally
 * prepared by `npm test`), migrates it, and points the tests at it. The teardown drops it. With
 * TEST_REDIS_CLUSTER=1 it also starts a local three-master Redis Cluster and sets REDIS_CLUSTER_NODES, so every
 * Redis client of the tests' apps and processes is a cluster client (each test file's database still keeps its keys
 * apart). With TEST_CITUS_WORKERS the database is made on a Citus cluster and distributed (./citus-cluster.ts).
 */
export default async function globalSetup(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set: run the suite with `npm test`');
  const name = `paygate_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  if (citusWorkers().length > 0) await prepareCitusDatabase(serverUrl, name);

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  process.env.TEST_SERVER_DATABASE_URL = serverUrl;
  process.env.TEST_DATABASE_NAME = name;
  process.env.DATABASE_URL = url.toString();
  process.env.APP_ENV = process.env.APP_ENV ?? 'sandbox';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  // Every test app's worker would reconcile yesterday against the stubs at boot; the scheduler's test turns it on.
  process.env.RECON_DAILY_AT = process.env.RECON_DAILY_AT ?? 'off';
  // Every test signs in from 127.0.0.1, many with wrong credentials on purpose: sign-in limits are lifted for the
  // suite; test/auth/throttling.e2e.spec.ts sets its own and tests them.
  process.env.LOGIN_IP_RATE_LIMIT_PER_MINUTE = process.env.LOGIN_IP_RATE_LIMIT_PER_MINUTE ?? '1000000';
  process.env.LOGIN_RATE_LIMIT_PER_MINUTE = process.env.LOGIN_RATE_LIMIT_PER_MINUTE ?? '1000000';

  if (process.env.TEST_REDIS_CLUSTER === '1') {
    testCluster.paygateTestCluster = await startRedisCluster();
    process.env.REDIS_CLUSTER_NODES = testCluster.paygateTestCluster.nodes;
    process.stdout.write(`\nRedis Cluster for the run: ${testCluster.paygateTestCluster.nodes}\n`);
  }

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require('../../scripts/migrate.js');
  await migrate(process.env.DATABASE_URL);
  if (citusWorkers().length > 0) await distributeTestDatabase(process.env.DATABASE_URL!);
}
