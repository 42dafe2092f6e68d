'use strict';
// npm run migration:run — applies pending migrations to DATABASE_URL.
const { ensureBuilt, ROOT } = require('./lib/build');

async function migrate(databaseUrl) {
  ensureBuilt();
  const { migrationDataSource } = require(`${ROOT}/dist/src/infra/database/data-source`);
  const dataSource = migrationDataSource(databaseUrl);
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

module.exports = { migrate };

if (require.main === module) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('DATABASE_URL is not set\n');
    process.exit(1);
  }
  migrate(url)
    .then((names) => process.stdout.write(names.length ? `applied: ${names.join(', ')}\n` : 'schema is up to date\n'))
    .catch((error) => {
      process.stderr.write(`migration failed: ${error.message}\n`);
      process.exit(1);
    });
}
