'use strict';
// npm test [-- jest args] — runs the whole suite against a real Postgres and Redis, found or started the same way as
// for `npm run sandbox` (scripts/lib/services.js). Jest's globalSetup creates its own database for the run on that
// server (from DATABASE_URL, which points at the server's `postgres` database) and the teardown drops it.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureBuilt, ensureInstalled, ROOT } = require('./lib/build');

let services = null;
let jest = null;
let stopping = false;

async function finish(code) {
  if (stopping) return;
  stopping = true;
  if (services) await services.stop();
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    const code = 128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal];
    if (jest && jest.exitCode === null && jest.signalCode === null)
      jest.kill(signal); // finish() runs on its exit
    else finish(code);
  });
}

async function main() {
  ensureInstalled();
  ensureBuilt();
  const { resolveServices } = require('./lib/services');
  services = await resolveServices({ database: 'postgres' });
  if (stopping) return;
  const env = { ...process.env, DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl };
  jest = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)], {
    env,
    cwd: ROOT,
    stdio: 'inherit',
  });
  jest.on('error', (error) => {
    process.stderr.write(`test: could not run jest: ${error.message}\n`);
    finish(1);
  });
  jest.on('exit', (code, signal) => finish(code ?? 128 + (require('node:os').constants.signals[signal] ?? 1)));
}

main().catch((error) => {
  process.stderr.write(`test: ${error instanceof Error ? error.message : String(error)}\n`);
  finish(1);
});
