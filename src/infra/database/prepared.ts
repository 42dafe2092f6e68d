import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** A named statement: Postgres parses and plans it once per connection, later calls send only the values. */
export interface PreparedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * Runs a named statement and returns its rows: on the transaction's connection when given the EntityManager of a
 * transaction, otherwise on any pooled connection. Errors are wrapped as EntityManager.query wraps them (a
 * QueryFailedError carrying the pg error's code, constraint and detail), so the pg-errors helpers still apply.
 */
export async function runPrepared<T extends QueryResultRow>(db: DataSource | EntityManager, statement: PreparedStatement): Promise<T[]> {
  const runner = db instanceof EntityManager ? db.queryRunner : undefined;
  const dataSource = db instanceof EntityManager ? db.dataSource : db;
  const connection: Pool | PoolClient = runner ? await runner.connect() : (dataSource.driver as PostgresDriver).master;
  try {
    return (await connection.query<T>(statement)).rows;
  } catch (error) {
    throw new QueryFailedError(statement.text, statement.values, error as Error);
  }
}
