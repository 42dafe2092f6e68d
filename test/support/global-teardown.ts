import { dropCitusDatabases } from './citus-cluster';
import { testCluster } from './global-setup';
import { dropTestDatabase, ledgerViolations } from './test-databases';

/**
 * Checks the ledger invariants over everything the whole suite wrote, then drops the run's database, while the
 * run's Redis Cluster (if any) stops. A violation fails the run even when every test passed on its own.
 */
export default async function globalTeardown(): Promise<void> {
  const results = await Promise.allSettled([testCluster.paygateTestCluster?.stop(), checkAndDropDatabase()]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

async function checkAndDropDatabase(): Promise<void> {
  const serverUrl = process.env.TEST_SERVER_DATABASE_URL;
  const name = process.env.TEST_DATABASE_NAME;
  if (!serverUrl || !name) return;
  let violations: string[];
  try {
    violations = await ledgerViolations(process.env.DATABASE_URL!);
  } finally {
    await dropTestDatabase(serverUrl, name);
    await dropCitusDatabases(serverUrl, name);
  }
  if (violations.length > 0) {
    throw new Error(`Ledger invariants violated after the suite:\n${violations.join('\n')}`);
  }
  process.stdout.write('\nLedger invariants (a)-(e) hold over all data the suite wrote.\n');
}
