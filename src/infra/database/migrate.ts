import { loadModule, parseSync } from 'libpg-query';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
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
    migrations = await runMigrations(dataSource);
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

/** Runs the data source's pending migrations, each in its transaction; answers their names. */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  if (await onCitus(dataSource)) await statementAtATime(dataSource);
  return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
}

const onCitus = async (dataSource: DataSource) => (await dataSource.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`)).length > 0;

/**
 * On a Citus coordinator, a migration's query text holding several statements is run one statement at a time. Inside a
 * transaction that has already reached the workers (046 locks its tables first), Citus sends a DDL's text on to
 * them as a prepared statement, which refuses several commands ("cannot insert multiple commands into a prepared
 * statement", seen on 13.2.2). The statements are cut where Postgres's own parser says they start and end.
 */
async function statementAtATime(dataSource: DataSource): Promise<void> {
  await loadModule();
  const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const runner = createQueryRunner(mode);
    const query = runner.query.bind(runner) as (sql: string, parameters?: unknown[], structured?: boolean) => Promise<unknown>;
    runner.query = (async (sql: string, parameters?: unknown[], structured?: boolean) => {
      const statements = parameters?.length || structured ? [sql] : statementsOf(sql);
      let result: unknown;
      for (const statement of statements) result = await query(statement, parameters, structured);
      return result;
    }) as typeof runner.query;
    return runner;
  };
}

/** The statements of a query text, cut at the parser's byte offsets. */
function statementsOf(sql: string): string[] {
  const bytes = Buffer.from(sql);
  const { stmts } = parseSync(sql) as { stmts: Array<{ stmt_location?: number; stmt_len?: number }> };
  if (stmts.length < 2) return [sql];
  return stmts.map(({ stmt_location: start = 0, stmt_len: length = 0 }) =>
    bytes
      .subarray(start, length > 0 ? start + length : bytes.length)
      .toString()
      .trim(),
  );
}
