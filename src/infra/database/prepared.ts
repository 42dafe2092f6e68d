import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager } from 'typeorm';

/**
 * A statement Postgres parses and plans once per connection and then only executes: the hot money paths run one
 * such call per request (or per batch), so parse and plan time would otherwise be a large share of their cost.
 */
export interface PreparedStatement {
  /** Unique per SQL text: pg prepares it under this name on each pooled connection the first time it runs there. */
  name: string;
  text: string;
}

/** The pg pool TypeORM holds: prepared statements need pg's own query config, which manager.query cannot pass. */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}

/**
 * Runs a prepared statement: on a pooled connection outside any transaction (it is one itself), or, given the
 * EntityManager of a transaction, on that transaction's connection. Errors are pg's own (code, constraint, detail),
 * which the pg-errors helpers and the ledger's error translation read as they read manager.query's.
 */
export async function runPrepared<R extends QueryResultRow>(
  db: DataSource | EntityManager,
  statement: PreparedStatement,
  values: unknown[],
): Promise<R[]> {
  const runner = db instanceof EntityManager ? db.queryRunner : undefined;
  const connection: Pool | PoolClient = runner ? await runner.connect() : pgPool(db instanceof EntityManager ? db.dataSource : db);
  const result = await connection.query<R>({ name: statement.name, text: statement.text, values });
  return result.rows;
}
