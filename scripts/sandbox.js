'use strict';
// npm run sandbox — one command from a fresh clone to a running sandbox: installs what is missing, builds, finds or
// starts Postgres and Redis (scripts/lib/services.js), migrates, seeds a demo merchant, runs API + workers in one
// process (`node dist/src/main.js sandbox`) and prints the URLs and the demo credentials.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureBuilt, ensureInstalled, ROOT } = require('./lib/build');

const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const CLI = path.join(ROOT, 'dist', 'src', 'admin', 'cli.js');
const SEED_KEYS = [
  'client_code',
  'username',
  'password',
  'consumer_key',
  'consumer_secret',
  'service_code',
  'settlement_account_number',
  'currency',
  'signing_secret',
];

let services = null;
let app = null;
let shuttingDown = false;

function fail(message, code = 1) {
  process.stderr.write(`\nsandbox: ${message}\n`);
  return shutdown(code);
}

/** Stops the app first (it still needs the database to finish its work), then what we started. */
async function shutdown(code, signal) {
  if (shuttingDown) return;
  shuttingDown = true;
  if (app && app.exitCode === null && app.signalCode === null) {
    const exited = new Promise((resolve) => app.once('exit', resolve));
    app.kill(signal ?? 'SIGTERM');
    const timer = setTimeout(() => app.kill('SIGKILL'), 15000);
    await exited;
    clearTimeout(timer);
  }
  if (services) await services.stop();
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (!shuttingDown) process.stdout.write(`\nsandbox: ${signal} received, stopping...\n`);
    shutdown(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal], signal);
  });
}

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => resolve({ code: 1, stdout, stderr: `${stderr}${error.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

async function portInUse(port) {
  const { canConnect } = require('./lib/services');
  return (await canConnect('127.0.0.1', port, 500)) || (await canConnect('::1', port, 500));
}

async function waitForLive(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (app.exitCode !== null || app.signalCode !== null) return false;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return true;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

/** A value safe inside single quotes in a POSIX shell. */
const shellQuote = (text) => `'${String(text).replace(/'/g, `'\\''`)}'`;

function banner({ base, seed, databaseUrl, redis }) {
  const { redact } = require('./lib/services');
  const lines = [];
  const row = (label, value) => lines.push(`${label.padEnd(27)} ${value}`);
  lines.push('Paygate sandbox is running (APP_ENV=sandbox: simulated rails, see docs for the test numbers)', '');
  row('Wallet service API', `${base}/api/v1`);
  row('Gateway API', `${base}/v1  (and ${base}/v2)`);
  row('API docs (Swagger UI)', `${base}/docs   (OpenAPI JSON: ${base}/docs-json)`);
  row('Health', `${base}/health/live   ${base}/health/ready`);
  row('Metrics', `${base}/metrics`);
  row('Postgres', redact(databaseUrl));
  row('Redis', redis.source === 'missing' ? `${redis.url}  (NOT reachable: see the message above)` : redis.url);
  lines.push('', 'Demo merchant (`npm run admin -- seed --json` prints a fresh set any time):');
  const shown = new Set();
  for (const key of SEED_KEYS) {
    if (seed[key] === undefined || seed[key] === null) continue;
    row(`  ${key}`, String(seed[key]));
    shown.add(key);
  }
  for (const [key, value] of Object.entries(seed)) {
    if (shown.has(key) || value === null || typeof value === 'object') continue;
    row(`  ${key}`, String(value));
  }
  lines.push('', 'Log in to the wallet service:');
  const login = JSON.stringify({ username: seed.username ?? '<username>', password: seed.password ?? '<password>' });
  lines.push(`  curl -s -X POST ${base}/api/v1/auth/login -H 'content-type: application/json' -d ${shellQuote(login)}`);
  if (seed.consumer_key) {
    const auth = JSON.stringify({ consumer_key: seed.consumer_key, consumer_secret: seed.consumer_secret ?? '<consumer_secret>' });
    lines.push('Get a gateway token:');
    lines.push(`  curl -s -X POST ${base}/v1/auth -H 'content-type: application/json' -d ${shellQuote(auth)}`);
  }
  lines.push('', 'Press Ctrl+C to stop.');
  const width = Math.min(Math.max(...lines.map((l) => l.length)) + 2, 160);
  const rule = '─'.repeat(width);
  return ['', `┌${rule}`, ...lines.map((l) => `│ ${l}`), `└${rule}`, ''].join('\n');
}

async function main() {
  ensureInstalled();
  ensureBuilt();
  const { resolveServices } = require('./lib/services');

  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return fail(`PORT must be a port number, got "${process.env.PORT}"`);
  if (await portInUse(port)) {
    return fail(`port ${port} is already in use (another sandbox?). Stop it, or run with PORT=<another port>.`);
  }
  const base = (process.env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/$/, '');

  services = await resolveServices({ database: 'paygate' });
  if (shuttingDown) return;
  const env = {
    ...process.env,
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    APP_ENV: 'sandbox',
    PORT: String(port),
    PUBLIC_BASE_URL: base,
  };

  const { migrate } = require('./migrate');
  const applied = await migrate(services.databaseUrl);
  process.stdout.write(applied.length ? `Migrations: applied ${applied.join(', ')}\n` : 'Migrations: schema is up to date\n');
  if (shuttingDown) return;

  const seeded = await run(process.execPath, [CLI, 'seed', '--json'], env);
  if (shuttingDown) return;
  if (seeded.code !== 0) {
    process.stderr.write(seeded.stderr);
    return fail(`seeding the demo merchant failed (exit code ${seeded.code})`);
  }
  let seed;
  try {
    const line = seeded.stdout.trim().split('\n').filter(Boolean).pop();
    seed = JSON.parse(line);
  } catch {
    process.stderr.write(`${seeded.stdout}${seeded.stderr}`);
    return fail('the seed command did not print a JSON object');
  }
  process.stdout.write(`Seed: demo merchant ${seed.client_code ?? ''} ready\nStarting API + workers...\n`);

  app = spawn(process.execPath, [MAIN, 'sandbox'], { env, cwd: ROOT, stdio: 'inherit' });
  app.on('exit', (code, signal) => {
    if (shuttingDown) return;
    process.stderr.write(`\nsandbox: the server exited (${signal ?? `code ${code}`}).\n`);
    shutdown(code || 1);
  });
  if (!(await waitForLive(port, 120000))) {
    if (!shuttingDown) return fail(`the server did not answer ${base}/health/live within 2 minutes`);
    return;
  }
  process.stdout.write(`${banner({ base, seed, databaseUrl: services.databaseUrl, redis: services.redis })}\n`);
}

main().catch((error) => fail(error instanceof Error ? error.message : String(error)));
