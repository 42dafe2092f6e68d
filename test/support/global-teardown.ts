import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.TEST_SERVER_DATABASE_URL;
  const name = process.env.TEST_DATABASE_NAME;
  if (!serverUrl || !name || process.env.KEEP_TEST_DATABASE) return;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
