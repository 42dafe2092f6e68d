'use strict';
// npm run admin -- <command> [--json] — the operator CLI (provider contract §8), compiled from src/admin/cli.ts.
// Without DATABASE_URL it uses the same Postgres as `npm run sandbox` (local server, or the embedded one), and says
// so on stderr, so stdout stays exactly one JSON object with --json.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureBuilt, ROOT } = require('./lib/build');

async function main() {
  ensureBuilt();
  let stop = async () => {};
  const env = { ...process.env };
  if (!env.DATABASE_URL) {
    const { resolvePostgres } = require('./lib/services');
    const postgres = await resolvePostgres({ database: 'paygate', log: (line) => process.stderr.write(`${line}\n`) });
    env.DATABASE_URL = postgres.url;
    stop = postgres.stop;
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
