import { DataSource, DataSourceOptions } from 'typeorm';
import { join } from 'node:path';

/** The migration runner (scripts/migrate.js, outside Nest and its configuration) runs one migration at a time. */
const MIGRATION_POOL_SIZE = 2;
/**
 * How long a pooled connection may stay idle before it is closed: longer than the relays' 30 s rounds, so an idle
 * process keeps reusing a warm connection; well under the idle cut of NATs and load balancers (about 4 minutes and
 * up), which may drop a connection without a word and leave the next query on it hanging.
 */
const IDLE_CONNECTION_MS = 60_000;

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
    // 503 instead of hanging while Postgres is away. Idle connections are kept IDLE_CONNECTION_MS, not pg's 10 s: each
    // new one costs Postgres a backend start (transactions of its own), which an idle process's rounds would pay each time.
    //
    // Generic plans for what Postgres caches (the money functions' statements, named prepared statements): left to
    // choose, it planned them afresh on every call (wallet_operation_rows took 1 ms a call, 0.36 ms on its generic
    // plan), since the tables they read are partitioned. Their statements look rows up by client and id, where a
    // generic plan is the plan; one-off queries are planned with their values as before. A generic plan cannot see
    // that an id list holds one or two ids, and at the default random_page_cost it read a merchant's every account
    // to find a transfer's two: the rows these statements read are in memory, where an index probe costs about
    // what a sequential page does (docs/decisions.md).
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: IDLE_CONNECTION_MS,
      options: '-c plan_cache_mode=force_generic_plan -c random_page_cost=1.1',
    },
  };
}

export function migrationDataSource(databaseUrl: string): DataSource {
  return new DataSource(dataSourceOptions(databaseUrl, MIGRATION_POOL_SIZE));
}
