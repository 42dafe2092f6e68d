'use strict';
// npm run admin -- <command> [--json] — the operator CLI (provider contract §8), compiled from src/admin/cli.ts.
// Its database: DATABASE_URL when set; else the running sandbox's (.sandbox/state.json, written by `npm run sandbox`,
// so a second terminal reaches the sandbox's database, embedded or not); else the server `npm run sandbox` would use
// (local, or the embedded one), without creating the database. The CLI refuses a database that is not migrated.
// Anything said about that goes to stderr, so stdout stays exactly one JSON object with --json.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureBuilt, ROOT } = require('./lib/build');

async function main() {
  ensureBuilt();
  let stop = async () => {};
  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    const sandbox = require('./lib/sandbox-state').readSandboxState();
    if (sandbox) {
      env.DATABASE_URL = sandbox.databaseUrl;
    } else {
      const { resolvePostgres } = require('./lib/services');
      // Silent: on success stderr stays empty, and a refusal is the CLI's one line, which names the database.
      const postgres = await resolvePostgres({ database: 'paygate', create: false, log: () => {} });
      env.DATABASE_URL = postgres.url;
      stop = postgres.stop;
    }
  }
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'admin', 'cli.js'), ...process.argv.slice(2)], {
    env,
    cwd: ROOT,
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`error: ${error.message}\n`);
      resolve(1);
    });
    child.on('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  await stop();
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`error: ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')}\n`);
  process.exit(1);
});
