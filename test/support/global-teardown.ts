import { Client } from 'pg';
import { LEDGER_INVARIANTS } from '../../src/ledger/ledger-invariants';
import { testCluster } from './global-setup';

/**
 * Checks the ledger invariants over everything the whole suite wrote, then drops the run's database. A
 * violation fails the run even when every test passed on its own.
 */
export default async function globalTeardown(): Promise<void> {
  await testCluster.paygateTestCluster?.stop();
  const serverUrl = process.env.TEST_SERVER_DATABASE_URL;
  const name = process.env.TEST_DATABASE_NAME;
  if (!serverUrl || !name) return;
  const violations: string[] = [];
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    for (const invariant of LEDGER_INVARIANTS) {
      const { rows } = await db.query(invariant.sql);
      if (rows.length > 0) violations.push(`${invariant.name}: ${JSON.stringify(rows.slice(0, 3))}`);
    }
  } finally {
    await db.end();
  }
  if (!process.env.KEEP_TEST_DATABASE) {
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  if (violations.length > 0) {
    throw new Error(`Ledger invariants violated after the suite:\n${violations.join('\n')}`);
  }
  process.stdout.write('\nLedger invariants (a)-(d) hold over all data the suite wrote.\n');
}
