import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Client } from 'pg';
import { dataSourceOptions } from '../infra/database/data-source';

/** host:port/database of a Postgres URL: enough to recognise it, without the password. */
export function describeDatabase(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `"${decodeURIComponent(url.pathname.slice(1))}" on ${url.hostname}:${url.port || 5432}`;
}

/**
 * Why the operator CLI must not run against this database, or null when every migration is applied. Read only:
 * it creates neither the database nor the migrations table (an operator pointed at the wrong server should be told,
 * not handed an empty schema).
 */
export async function databaseProblem(databaseUrl: string): Promise<string | null> {
  const where = describeDatabase(databaseUrl);
  // Only the migrations glob is read: no pool is opened.
  const migrationsDir = dirname((dataSourceOptions(databaseUrl, 1).migrations as string[])[0]);
  const known = readdirSync(migrationsDir)
    .map((file) => /^(\d+)-.+\.js$/.exec(file)?.[1])
    .filter((timestamp): timestamp is string => timestamp !== undefined);
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined); // a dropped connection is reported by the failing query
  try {
    await client.connect();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') return `database ${where} does not exist: start \`npm run sandbox\` (or set DATABASE_URL) first`;
    return `cannot reach database ${where}: ${(error as Error).message}`;
  }
  try {
    const { rows: table } = await client.query<{ exists: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`);
    const { rows } = table[0].exists
      ? await client.query<{ timestamp: string }>('SELECT timestamp::text FROM schema_migrations')
      : { rows: [] };
    const applied = new Set(rows.map((row) => row.timestamp));
    const pending = known.filter((timestamp) => !applied.has(timestamp));
    if (pending.length === 0) return null;
    return (
      `database ${where} is not migrated (${pending.length} of ${known.length} migrations pending): ` +
      'start `npm run sandbox`, or run `npm run migration:run` with DATABASE_URL set'
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
