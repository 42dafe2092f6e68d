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
    migrationsRun: false,
    migrations: [join(__dirname, '..', '..', '..', 'migrations', '*.js')],
    migrationsTableName: 'schema_migrations',
    extra: { max: poolSize },
  };
}

export function migrationDataSource(databaseUrl: string): DataSource {
  return new DataSource(dataSourceOptions(databaseUrl, MIGRATION_POOL_SIZE));
}
