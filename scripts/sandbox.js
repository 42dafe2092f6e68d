'use strict';
// npm run sandbox — one command from a fresh clone to a running sandbox: installs what is missing, builds, finds or
// starts Postgres and Redis (scripts/lib/services.js), migrates, seeds a demo merchant, runs API + workers in one
// process (`node dist/src/main.js sandbox`), prints the URLs and the demo credentials, and writes them to
// .sandbox/state.json for `npm run admin` in another terminal (scripts/lib/sandbox-state.js). The server logs JSON
// (as in production); this terminal shows them as short lines (scripts/lib/pretty-logs.js).
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureBuilt, ensureInstalled, ROOT } = require('./lib/build');
const { prettyLogs } = require('./lib/pretty-logs');
const { canConnect, redact, resolveServices } = require('./lib/services');
const { readSandboxState, removeSandboxState, stateFile, writeSandboxState } = require('./lib/sandbox-state');

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
/**
 * Ctrl+C must stop everything within 2 s. The server gives itself SHUTDOWN_GRACE_MS (1 s in the sandbox) and exits;
 * should it still be running after this, it is killed (Postgres holds all work, nothing is lost).
 */
const APP_STOP_DEADLINE_MS = 1500;
const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

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
  removeSandboxState();
  if (app && app.exitCode === null && app.signalCode === null) {
    const exited = new Promise((resolve) => app.once('exit', resolve));
    app.kill(signal ?? 'SIGTERM');
    const timer = setTimeout(() => app.kill('SIGKILL'), APP_STOP_DEADLINE_MS);
    await exited;
    clearTimeout(timer);
  }
  if (services) await services.stop();
  process.exit(code);
}

for (const signal of Object.keys(SIGNAL_NUMBERS)) {
  process.on(signal, () => {
    if (!shuttingDown) process.stdout.write(`\nsandbox: ${signal} received, stopping...\n`);
    shutdown(128 + SIGNAL_NUMBERS[signal], signal);
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

/** The box and everything in it fit a 100-column terminal. */
const BOX_WIDTH = 100;
const TEXT_WIDTH = BOX_WIDTH - 2;
const LABEL_WIDTH = 27;
/** Values printed whole whatever their length: cutting one would make it useless to copy. */
const SECRETS = new Set(['password', 'consumer_key', 'consumer_secret', 'signing_secret']);

/** A long value that is not a secret keeps its start and end ("http://a-very-…/docs"). */
function shorten(text, width) {
  if (text.length <= width) return text;
  const head = Math.ceil((width - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
}

/** "label  value" on one line, or the value alone on the next line when both do not fit. */
function labelled(label, value, { secret = false } = {}) {
  const oneLine = `${label.padEnd(LABEL_WIDTH)} ${value}`;
  if (oneLine.length <= TEXT_WIDTH) return [oneLine];
  const indent = '    ';
  return [label, `${indent}${secret ? value : shorten(value, TEXT_WIDTH - indent.length)}`];
}

/** A shell command broken at its arguments with backslash continuations, each line at most TEXT_WIDTH wide. */
function wrapCommand(words) {
  const lines = [];
  let current = '';
  for (const word of words) {
    if (current && current.length + 1 + word.split('\n')[0].length + 2 > TEXT_WIDTH) {
      lines.push(`${current} \\`);
      current = `    ${word}`;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  return [...lines, current];
}

function banner({ base, seed, databaseUrl, redisUrl, redisReachable }) {
  const lines = ['Paygate sandbox is running (APP_ENV=sandbox: simulated rails; test numbers in the docs)', ''];
  const row = (label, value, options) => lines.push(...labelled(label, value, options));
  row('Wallet service API', `${base}/api/v1`);
  row('Gateway API', `${base}/v1  (and /v2)`);
  row('API docs (Swagger UI)', `${base}/docs  (OpenAPI JSON: /docs-json)`);
  row('Health', `${base}/health/live  /health/ready`);
  row('Metrics', `${base}/metrics`);
  row('Postgres', redact(databaseUrl));
  row('Redis', redisReachable ? redisUrl : `${redisUrl}  (NOT reachable: queued work waits for it)`);
  lines.push('', 'Demo merchant (`npm run admin -- seed --json` prints a fresh set any time):');
  const shown = new Set();
  const credential = (key, value) => {
    row(`  ${key}`, String(value), { secret: SECRETS.has(key) });
    shown.add(key);
  };
  for (const key of SEED_KEYS) if (seed[key] !== undefined && seed[key] !== null) credential(key, seed[key]);
  for (const [key, value] of Object.entries(seed)) {
    if (!shown.has(key) && value !== null && typeof value !== 'object') credential(key, value);
  }
  lines.push('', 'Press Ctrl+C to stop. From another terminal, `npm run admin -- <command>` uses this sandbox.');
  const rule = '─'.repeat(BOX_WIDTH - 1);
  return ['', `┌${rule}`, ...lines.map((l) => (l ? `│ ${l}` : '│')), `└${rule}`].join('\n');
}

/**
 * A JSON body as one single-quoted shell word; when too wide, one member a line (JSON allows the line breaks, the
 * shell keeps them inside the quotes), so that no value is ever cut.
 */
function jsonWord(body) {
  const members = Object.entries(body).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
  const flat = shellQuote(`{${members.join(',')}}`);
  return flat.length + 4 <= TEXT_WIDTH ? flat : shellQuote(`{${members.join(',\n     ')}}`);
}

/** Ready-to-paste commands, outside the box so that copying them picks up no border characters. */
function tryIt({ base, seed }) {
  const post = (url, body) =>
    wrapCommand(['curl', '-s', '-X', 'POST', url, '-H', `'content-type: application/json'`, '-d', jsonWord(body)]);
  const lines = ['Log in to the wallet service:'];
  lines.push(...post(`${base}/api/v1/auth/login`, { username: seed.username ?? '<username>', password: seed.password ?? '<password>' }));
  if (seed.consumer_key) {
    lines.push('Get a gateway token:');
    lines.push(
      ...post(`${base}/v1/auth`, { consumer_key: seed.consumer_key, consumer_secret: seed.consumer_secret ?? '<consumer_secret>' }),
    );
  }
  return lines.join('\n');
}

async function main() {
  ensureInstalled();
  ensureBuilt();
  const running = readSandboxState();
  if (running) {
    return fail(`a sandbox is already running (pid ${running.pid}, ${running.baseUrl}; ${stateFile()}). Stop it first.`);
  }
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

  const { migrate, describeMigration } = require('./migrate');
  const migrated = await migrate(services.databaseUrl);
  process.stdout.write(`Migrations: ${describeMigration(migrated).split('\n').join('; ')}\n`);
  if (shuttingDown) return;

  const seeded = await run(process.execPath, [CLI, 'seed', '--json'], env);
  if (shuttingDown) return;
  if (seeded.code !== 0) {
    process.stderr.write(seeded.stderr);
    return fail(`seeding the demo merchant failed (exit code ${seeded.code})`);
  }
  let seed;
  try {
    seed = JSON.parse(seeded.stdout);
  } catch {
    process.stderr.write(`${seeded.stdout}${seeded.stderr}`);
    return fail('the seed command did not print a JSON object');
  }
  process.stdout.write(`Seed: demo merchant ${seed.client_code ?? ''} ready\nStarting API + workers...\n`);

  app = spawn(process.execPath, [MAIN, 'sandbox'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  prettyLogs(app.stdout, process.stdout);
  app.on('exit', (code, signal) => {
    if (shuttingDown) return;
    process.stderr.write(`\nsandbox: the server exited (${signal ?? `code ${code}`}).\n`);
    shutdown(code || 1);
  });
  if (!(await waitForLive(port, 120000))) {
    if (!shuttingDown) return fail(`the server did not answer ${base}/health/live within 2 minutes`);
    return;
  }
  writeSandboxState({
    baseUrl: base,
    databaseUrl: services.databaseUrl,
    redisUrl: services.redisUrl,
    appPid: app.pid,
    startedAt: new Date().toISOString(),
  });
  const redisAddress = new URL(services.redisUrl);
  const redisReachable = await canConnect(redisAddress.hostname, Number(redisAddress.port || 6379), 1000);
  process.stdout.write(
    `${banner({ base, seed, databaseUrl: services.databaseUrl, redisUrl: services.redisUrl, redisReachable })}\n${tryIt({ base, seed })}\n\n`,
  );
}

main().catch((error) => fail(error instanceof Error ? error.message : String(error)));
