import { DataSource, DataSourceOptions } from 'typeorm';
import { join } from 'node:path';

/** Options shared by the Nest module and the migration runner. Schema changes only ever come from migrations. */
export function dataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    synchronize: false,
    // Never log queries: their parameters carry payer data and credentials (errors are logged without them).
    logging: false,
    migrationsRun: false,
    migrations: [join(__dirname, '..', '..', '..', 'migrations', '*.js')],
    migrationsTableName: 'schema_migrations',
    // One pool per process; sized for a 2-core machine where Postgres shares the CPU.
    // A request waits at most 10 s for a connection; then it is answered 503 instead of hanging while Postgres is away.
    extra: { max: Number(process.env.DB_POOL_SIZE ?? 20), connectionTimeoutMillis: 10_000 },
  };
}

export function migrationDataSource(databaseUrl: string): DataSource {
  return new DataSource(dataSourceOptions(databaseUrl));
}
