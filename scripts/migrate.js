'use strict';
// npm run migration:run — applies pending migrations, then the database function sources (src/<domain>/sql/*.sql),
// to DATABASE_URL, and creates the history tables' partitions of this month and the coming ones.
const { ensureBuilt, ROOT } = require('./lib/build');

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

module.exports = { migrate, describeMigration };

if (require.main === module) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set\n');
    process.exit(1);
  }
  migrate(url)
    .then((result) => process.stdout.write(`${describeMigration(result)}\n`))
    .catch((error) => {
      process.stderr.write(`migration failed: ${error.message}\n`);
      process.exit(1);
    });
}
