import { Client } from 'pg';
import { migrationDataSource } from './data-source';
import { applyFunctionSources, FunctionSourcesApplied } from './function-sources';

export interface MigrationResult {
  migrations: string[];
  functions: FunctionSourcesApplied;
}

/**
 * Brings a database to the code: the versioned migrations (tables, indexes, data), then the function sources. The
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
    return { migrations, functions: await applyFunctionSources(client) };
  } finally {
    await client.end();
  }
}
