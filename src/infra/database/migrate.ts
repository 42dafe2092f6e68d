import { Client } from 'pg';
import { migrationDataSource } from './data-source';
import { applyFunctionSources, FunctionSourcesApplied } from './function-sources';
import { CreatedPartition, ensurePartitions } from './partitions';

export interface MigrationResult {
  migrations: string[];
  functions: FunctionSourcesApplied;
  partitions: CreatedPartition[];
}

/**
 * Brings a database to the code: the versioned migrations (tables, indexes, data), the function sources, then the
 * history tables' partitions of this month and the coming ones (so a fresh database has them). The
 * one way every database is migrated: `npm run migration:run`, the image's migrate step, the sandbox, tests, benches.
 */
export async function migrate(databaseUrl: string): Promise<MigrationResult> {
  const dataSource = migrationDataSource(databaseUrl);
  await dataSource.initialize();
  let migrations: string[];
  try {
    migrations = (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const functions = await applyFunctionSources(client);
    return { migrations, functions, partitions: await ensurePartitions(client) };
  } finally {
    await client.end();
  }
}
