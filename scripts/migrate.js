'use strict';
// npm run migration:run — applies pending migrations, then the database function sources (src/<domain>/sql/*.sql),
// to DATABASE_URL, and creates the history tables' partitions of this month and the coming ones.
const { setTimeout: sleep } = require('node:timers/promises');
const { Client } = require('pg');
const { ensureBuilt, ROOT } = require('./lib/build');

/** A server that is not up yet: nothing listens (compose starts us beside it), or Postgres is still starting. */
const NOT_UP_YET = new Set(['ECONNREFUSED', '57P03']);

/**
 * Waits until the database accepts a connection, retrying every `intervalMs` for at most `timeoutMs` while the server
 * refuses connections or answers "starting up"; any other error (a wrong password, a missing database) fails at once.
 */
async function waitForDatabase(
  databaseUrl,
  { timeoutMs = 60_000, intervalMs = 1_000, log = (line) => process.stderr.write(`${line}\n`) } = {},
) {
  const { hostname, port } = new URL(databaseUrl);
  const server = `${hostname || 'localhost'}:${port || 5432}`;
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt += 1) {
    const client = new Client({ connectionString: databaseUrl });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (!NOT_UP_YET.has(error.code)) throw error;
      if (Date.now() + intervalMs > deadline) {
        throw new Error(
          `the database at ${server} did not accept connections within ${Math.round(timeoutMs / 1000)} s (${error.code}: ${error.message})`,
          { cause: error },
        );
      }
      if (attempt === 1) log(`waiting for the database at ${server} (${error.code}: ${error.message})`);
      await sleep(intervalMs);
    }
  }
}

/** Migrates the database; answers what it did, as describeMigration words it. */
async function migrate(databaseUrl) {
  ensureBuilt();
  const { migrate: migrateDatabase } = require(`${ROOT}/dist/src/infra/database/migrate`);
  return migrateDatabase(databaseUrl);
}

function describeMigration({ migrations, functions, partitions }) {
  const parts = [
    migrations.length ? `applied ${migrations.join(', ')}` : 'schema is up to date',
    functions.applied.length ? `function sources applied: ${functions.applied.join(', ')}` : 'function sources are up to date',
  ];
  if (functions.dropped.length) parts.push(`functions without a source dropped: ${functions.dropped.join(', ')}`);
  if (partitions.length) parts.push(`partitions created: ${partitions.map((p) => p.partition).join(', ')}`);
  return parts.join('\n');
}

module.exports = { migrate, describeMigration, waitForDatabase };

if (require.main === module) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set\n');
    process.exit(1);
  }
  waitForDatabase(url)
    .then(() => migrate(url))
    .then((result) => process.stdout.write(`${describeMigration(result)}\n`))
    .catch((error) => {
      process.stderr.write(`migration failed: ${error.message}\n`);
      process.exit(1);
    });
}
