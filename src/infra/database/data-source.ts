import { DataSource, DataSourceOptions } from 'typeorm';
import { join } from 'node:path';

/** The migration runner (scripts/migrate.js, outside Nest and its configuration) runs one migration at a time. */
const MIGRATION_POOL_SIZE = 2;

/**
 * Options shared by the Nest module and the migration runner. Schema changes only ever come from migrations.
 * `poolSize` is the validated DB_POOL_SIZE (AppConfig.dbPoolSize): one pool per process.
 */
export function dataSourceOptions(databaseUrl: string, poolSize: number): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    synchronize: false,
    // Never log queries: their parameters carry payer data and credentials (errors are logged without them).
    logging: false,
    migrationsRun: false,
    migrations: [join(__dirname, '..', '..', '..', 'migrations', '*.js')],
    migrationsTableName: 'schema_migrations',
    // One pool per process, sized by DB_POOL_SIZE. A request waits at most 10 s for a connection; then it is answered
    // 503 instead of hanging while Postgres is away.
    extra: { max: poolSize, connectionTimeoutMillis: 10_000 },
  };
}

export function migrationDataSource(databaseUrl: string): DataSource {
  return new DataSource(dataSourceOptions(databaseUrl, MIGRATION_POOL_SIZE));
}
