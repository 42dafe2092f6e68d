import { Client } from 'pg';
import { LEDGER_INVARIANTS } from '../../src/ledger/ledger-invariants';

/** How long a test's own Postgres client waits for a connection: a loaded server is slow, never silent. */
export const PG_CONNECT_TIMEOUT_MS = 15_000;

/** The ledger invariants a database breaks, each with a few of its offending rows; empty when the ledger holds. */
export async function ledgerViolations(url: string): Promise<string[]> {
  const db = new Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  await db.connect();
  try {
    const violations: string[] = [];
    for (const invariant of LEDGER_INVARIANTS) {
      const { rows } = await db.query(invariant.sql);
      if (rows.length > 0) violations.push(`${invariant.name}: ${JSON.stringify(rows.slice(0, 3))}`);
    }
    return violations;
  } finally {
    await db.end();
  }
}

/** Drops the database (its sessions cut), unless KEEP_TEST_DATABASE asks to keep it for a look. */
export async function dropTestDatabase(serverUrl: string, name: string): Promise<void> {
  if (process.env.KEEP_TEST_DATABASE) return;
  const admin = new Client({ connectionString: serverUrl, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => admin.end());
}
