import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * Creates a database of its own for this run on the Postgres named by DATABASE_URL (the server, normally
 * prepared by `npm test`), migrates it, and points the tests at it. The teardown drops it.
 */
export default async function globalSetup(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL is not set: run the suite with `npm test`');
  const name = `paygate_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  process.env.TEST_SERVER_DATABASE_URL = serverUrl;
  process.env.TEST_DATABASE_NAME = name;
  process.env.DATABASE_URL = url.toString();
  process.env.APP_ENV = process.env.APP_ENV ?? 'sandbox';
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
  // Every test signs in from 127.0.0.1, many with wrong credentials on purpose: sign-in limits are lifted for the
  // suite; test/auth/throttling.e2e.spec.ts sets its own and tests them.
  process.env.LOGIN_IP_RATE_LIMIT_PER_MINUTE = process.env.LOGIN_IP_RATE_LIMIT_PER_MINUTE ?? '1000000';
  process.env.LOGIN_RATE_LIMIT_PER_MINUTE = process.env.LOGIN_RATE_LIMIT_PER_MINUTE ?? '1000000';

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require('../../scripts/migrate.js');
  await migrate(process.env.DATABASE_URL);
}
