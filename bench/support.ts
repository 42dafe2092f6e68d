/**
 * What the benchmarks (`npm run bench:ledger`, `bench:collections`, `bench:disbursements`) share: the reference
 * ceiling run in the same sitting and every figure's ratio to it, a database of their own (created, migrated,
 * dropped), `node dist/src/main.js <role>` children, autocannon runs with the CPU used by the API process, the
 * database's Postgres backends and the load generator, wait-event sampling, machine facts, the summary of a V8 CPU
 * profile, a round-trip-counting Postgres proxy, and for the gateway benches their whole setting (own Redis,
 * callback receiver, seeded merchant, API and workers, per-request costs, drains and round-trip counts). Not part
 * of `npm test`.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request as httpRequest, Server } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { Client } from 'pg';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon');

export const ROOT = join(__dirname, '..');
export const MAIN_JS = join(ROOT, 'dist', 'src', 'main.js');
export const CLI_JS = join(ROOT, 'dist', 'src', 'admin', 'cli.js');
/** The Postgres server the benchmarks create their database on. */
export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const log = (line: string) => console.log(`[bench] ${line}`);

/** Seconds of each load phase and autocannon connections; the reference ceiling runs with the same. */
export const DURATION = Number(process.env.BENCH_DURATION ?? 15);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Compiles dist/ when the sources are newer (what `npm run sandbox` and `npm run admin` do). */
export function ensureBuilt(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require(join(ROOT, 'scripts', 'lib', 'build')).ensureBuilt();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

// ------------------------------------------------------------------------------------------------ database

export interface BenchDatabase {
  name: string;
  url: string;
}

/** A name and URL for a database of the benchmark's own on the server of DATABASE_URL (not created yet). */
export function newBenchDatabase(prefix = 'paygate_bench'): BenchDatabase {
  const name = `${prefix}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  return { name, url: withDatabase(SERVER_URL, name) };
}

/**
 * Creates the database on the server of `admin` and migrates it with the compiled migrations (dist/ is built first
 * when stale). When the server runs without autovacuum, a stand-in keeps the database's statistics and dead rows as
 * autovacuum would (autovacuumStandIn).
 */
export async function createBenchDatabase(admin: Client, database: BenchDatabase): Promise<void> {
  log(`creating database ${database.name}`);
  await admin.query(`CREATE DATABASE ${database.name}`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require(join(ROOT, 'scripts', 'migrate.js')); // builds dist/ first when sources are newer
  await migrate(database.url);
  const [{ setting }] = (await admin.query(`SELECT setting FROM pg_settings WHERE name = 'autovacuum'`)).rows;
  if (setting === 'off' && STAND_IN_NAPTIME_S > 0) standIns.set(database.name, await autovacuumStandIn(database.url));
}

const standIns = new Map<string, () => Promise<void>>();
const STAND_IN_NAPTIME_S = Number(process.env.BENCH_AUTOVACUUM_NAPTIME ?? 10);

/**
 * Production runs Postgres with autovacuum; this machine's CI configuration turns it off. Without it the tables a
 * benchmark fills from empty are never analysed and plans keep the shapes chosen for empty tables (the payments
 * lookup by id went through the client index and read every payment of the run), a cost no production server pays.
 * Every BENCH_AUTOVACUUM_NAPTIME seconds (10; 0 turns the stand-in off) this applies autovacuum's thresholds at
 * their defaults: VACUUM a table when its dead rows pass 50 + 20 % of its rows, ANALYZE it when its changes since
 * the last analysis pass 50 + 10 %, throttled at autovacuum's cost delay. Answers the function that stops it.
 */
async function autovacuumStandIn(url: string): Promise<() => Promise<void>> {
  const db = new Client({ connectionString: url, application_name: 'bench autovacuum stand-in' });
  await db.connect();
  await db.query(`SET vacuum_cost_delay = '2ms'`);
  await db.query('SET vacuum_cost_limit = 200');
  const naptimeMs = STAND_IN_NAPTIME_S * 1000;
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();
  const runPass = async () => {
    const { rows } = await db.query(
      `SELECT * FROM (
         SELECT format('%I.%I', s.schemaname, s.relname) AS name,
                s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0) AS vacuum,
                s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0) AS analyze
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE c.relkind = 'r'
       ) t WHERE t.vacuum OR t.analyze`,
    );
    for (const t of rows as { name: string; vacuum: boolean; analyze: boolean }[]) {
      if (stopped) return;
      await db.query(t.vacuum ? `VACUUM (SKIP_LOCKED${t.analyze ? ', ANALYZE' : ''}) ${t.name}` : `ANALYZE (SKIP_LOCKED) ${t.name}`);
    }
  };
  const timer = setInterval(() => {
    pass = pass.then(runPass).catch((e) => log(`autovacuum stand-in: ${e.message}`));
  }, naptimeMs);
  timer.unref();
  log(`the server runs without autovacuum: a stand-in vacuums and analyses this database every ${naptimeMs / 1000} s`);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await pass;
    await db.end().catch(() => undefined);
  };
}

/** Drops the database (closing whatever is still connected), unless BENCH_KEEP_DATABASE is set. */
export async function dropBenchDatabase(admin: Client, name: string): Promise<void> {
  await standIns.get(name)?.();
  standIns.delete(name);
  if (process.env.BENCH_KEEP_DATABASE) return;
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) => log(`could not drop ${name}: ${e.message}`));
  log(`dropped database ${name}`);
}

export async function count(db: Client, table: string): Promise<number> {
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows;
  return n;
}

// ------------------------------------------------------------------------------------------------ wallets

/**
 * `count` wallets of a client written in bulk SQL and funded with `funding` each, the way MoneyMovementsService.fund
 * does it: per wallet one FUNDING operation owning one entry (the client's KES settlement account −X, the wallet +X)
 * and one EXTERNAL_CREDIT transaction record, balances moved to match. One transaction; the wallets' account numbers,
 * in order.
 */
export async function createFundedWallets(
  db: Client,
  o: { clientId: string; profileId: string; accountTypeId: string; count: number; funding: string },
): Promise<string[]> {
  await db.query('BEGIN');
  try {
    const [settlement] = (
      await db.query(
        `SELECT id, account_number, balance FROM ledger_accounts WHERE client_id = $1 AND kind = 'SETTLEMENT' AND currency = 'KES' FOR UPDATE`,
        [o.clientId],
      )
    ).rows;
    if (!settlement) throw new Error(`client ${o.clientId} has no KES settlement account`);
    const wallets = (
      await db.query(
        `WITH acc AS (
           INSERT INTO ledger_accounts (client_id, kind, currency, minimum_balance, can_overdraw)
           SELECT $1, 'WALLET', 'KES', 0, false FROM generate_series(1, $2) RETURNING id, account_number),
         w AS (
           INSERT INTO wallets (id, client_id, profile_id, account_type_id, account_name, status)
           SELECT id, $1, $3, $4, 'Bench wallet ' || account_number, 'ACTIVE' FROM acc)
         SELECT id, account_number FROM acc ORDER BY account_number`,
        [o.clientId, o.count, o.profileId, o.accountTypeId],
      )
    ).rows as Array<{ id: string; account_number: string }>;
    await db.query(`CREATE TEMP TABLE bench_fund (wallet_id uuid, i bigint, entry_id bigint, op_id uuid) ON COMMIT DROP`);
    await db.query(
      `INSERT INTO bench_fund SELECT w.id, w.i, nextval('journal_entries_id_seq'), gen_random_uuid()
       FROM unnest($1::uuid[]) WITH ORDINALITY w(id, i) ORDER BY w.i`,
      [wallets.map((w) => w.id)],
    );
    await db.query(`INSERT INTO journal_entries (id, client_id, kind) SELECT entry_id, $1, 'WALLET_FUNDING' FROM bench_fund ORDER BY i`, [
      o.clientId,
    ]);
    await db.query(
      `INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
       SELECT entry_id, $1, 'KES', -$2::numeric, $3::numeric - $2::numeric * i FROM bench_fund ORDER BY i`,
      [settlement.id, o.funding, settlement.balance],
    );
    await db.query(
      `INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
       SELECT entry_id, wallet_id, 'KES', $1::numeric, $1::numeric FROM bench_fund ORDER BY i`,
      [o.funding],
    );
    await db.query(
      `INSERT INTO wallet_operations (id, client_id, kind, entry_id) SELECT op_id, $1, 'FUNDING', entry_id FROM bench_fund ORDER BY i`,
      [o.clientId],
    );
    await db.query(
      `INSERT INTO wallet_transactions (operation_id, client_id, account_id, transaction_type, transaction_source, currency,
         transaction_amount, previous_balance, current_balance, other_party_account, transaction_narration, transaction_date)
       SELECT op_id, $1, wallet_id, 'CREDIT', 'EXTERNAL_CREDIT', 'KES', $2::numeric, 0, $2::numeric, $3, 'Wallet funding', now() FROM bench_fund ORDER BY i`,
      [o.clientId, o.funding, settlement.account_number],
    );
    await db.query(`UPDATE ledger_accounts SET balance = balance + $1::numeric WHERE id IN (SELECT wallet_id FROM bench_fund)`, [
      o.funding,
    ]);
    await db.query(`UPDATE ledger_accounts SET balance = balance - $1::numeric * $2 WHERE id = $3`, [
      o.funding,
      wallets.length,
      settlement.id,
    ]);
    await db.query('COMMIT');
    return wallets.map((w) => w.account_number);
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

// ------------------------------------------------------------------------------------------------ children

export interface RoleOptions {
  /** Added to the environment (after the bench's defaults LOG_LEVEL=warn and APP_ENV=sandbox). */
  env: Record<string, string>;
  /** Run under --cpu-prof, writing the profile into this directory at exit. */
  profileDir?: string | null;
}

/** `node dist/src/main.js <role>` with the bench's environment; its output goes to the bench's. */
export function startRole(role: 'api' | 'worker' | 'sandbox', options: RoleOptions): ChildProcess {
  const flags = options.profileDir ? ['--cpu-prof', '--cpu-prof-dir', options.profileDir] : [];
  return spawn(process.execPath, [...flags, MAIN_JS, role], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      APP_ENV: process.env.APP_ENV ?? 'sandbox',
      // One merchant's token sends every request of a run: the per-token limit (60,000 a minute) would answer 429.
      GATEWAY_RATE_LIMIT_PER_MINUTE: process.env.GATEWAY_RATE_LIMIT_PER_MINUTE ?? '1000000000',
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

export async function waitForLive(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/health/live`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error('API did not become live within 60 s');
}

/** SIGTERM, then SIGKILL after `graceMs` (a process killed so writes no --cpu-prof profile). */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

// ------------------------------------------------------------------------------------------------ machine and CPU

export async function machineFacts(admin: Client, extra: Record<string, unknown> = {}) {
  const [{ version }] = (await admin.query('SELECT version()')).rows;
  const settings = (
    await admin.query(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('max_connections','shared_buffers','synchronous_commit','fsync','work_mem','autovacuum')`,
    )
  ).rows;
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model,
    memory_gib: +(totalmem() / 2 ** 30).toFixed(1),
    loadavg_at_start: loadavg().map((l) => +l.toFixed(2)),
    node: process.version,
    postgres: version,
    postgres_settings: Object.fromEntries(
      settings.map((s: { name: string; setting: string; unit: string | null }) => [s.name, `${s.setting}${s.unit ?? ''}`]),
    ),
    db_pool_size: Number(process.env.DB_POOL_SIZE ?? 20),
    ...extra,
  };
}

/**
 * What one Postgres round trip costs on this machine: `SELECT 1` n times in a row on one connection, wall time and
 * the CPU of this process and of its backend per round trip; over TCP loopback (the benchmarks' DATABASE_URL) and,
 * when the server has one in /var/run/postgresql, over its Unix socket.
 */
export async function pgRoundTripCost(n = 5000) {
  const measure = async (config: ConstructorParameters<typeof Client>[0]) => {
    const c = new Client(config);
    await c.connect();
    try {
      const [{ pid }] = (await c.query('SELECT pg_backend_pid() AS pid')).rows;
      for (let i = 0; i < 500; i++) await c.query('SELECT 1');
      const backend0 = cpuTimes(pid);
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await c.query('SELECT 1');
      const wall = performance.now() - t0;
      const self = process.cpuUsage(self0);
      return {
        wall_us: +((wall * 1000) / n).toFixed(1),
        client_cpu_us: +((self.user + self.system) / n).toFixed(1),
        backend_cpu_us: +(((cpuTimes(pid) - backend0) * 1e6) / n).toFixed(1),
      };
    } finally {
      await c.end();
    }
  };
  const out: Record<string, unknown> = { tcp_loopback: await measure({ connectionString: SERVER_URL }) };
  const u = new URL(SERVER_URL);
  const socketDir = '/var/run/postgresql';
  if (['127.0.0.1', 'localhost'].includes(u.hostname) && existsSync(`${socketDir}/.s.PGSQL.${u.port || 5432}`)) {
    out.unix_socket = await measure({
      host: socketDir,
      port: Number(u.port || 5432),
      user: decodeURIComponent(u.username || 'postgres'),
      password: u.password ? decodeURIComponent(u.password) : undefined,
      database: u.pathname.slice(1) || 'postgres',
    }).catch((e: Error) => ({ error: e.message }));
  }
  return out;
}

/** CPU seconds (user + system) used so far by a process. */
export function cpuTimes(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
  const v = cpu.split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
  const total = v.reduce((a, b) => a + b, 0) / 100;
  return { busy: total - (v[3] + v[4]) / 100, total };
}

/** CPU seconds used so far by each Postgres backend connected to the benchmark database. */
export async function backendCpu(db: Client, dbName: string): Promise<Map<number, number>> {
  const { rows } = await db.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
  const result = new Map<number, number>();
  for (const { pid } of rows as Array<{ pid: number }>) {
    try {
      result.set(pid, cpuTimes(pid));
    } catch {
      // the backend exited
    }
  }
  return result;
}

/** CPU seconds used by the database's backends between two backendCpu() snapshots (backends that left are lost). */
export function backendSecondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, s] of after) seconds += s - (before.get(pid) ?? 0);
  return seconds;
}

/** Commits of the database and the server's WAL counters (pg_stat_wal is server-wide: other databases count too). */
export async function pgCounters(db: Client, dbName: string) {
  const [r] = (
    await db.query(
      `SELECT d.xact_commit::bigint AS c, d.xact_rollback::bigint AS r, w.wal_records::bigint AS wr, w.wal_bytes::bigint AS wb,
              w.wal_sync::bigint AS ws, w.wal_write::bigint AS ww
       FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = $1`,
      [dbName],
    )
  ).rows;
  return {
    commits: Number(r.c),
    rollbacks: Number(r.r),
    walRecords: Number(r.wr),
    walBytes: Number(r.wb),
    walFlushes: Number(r.ws),
    walWrites: Number(r.ww),
  };
}

export async function tableScans(db: Client): Promise<Map<string, { seqRows: number }>> {
  const { rows } = await db.query('SELECT relname, seq_tup_read::bigint AS seq FROM pg_stat_user_tables');
  return new Map(rows.map((r: { relname: string; seq: string }) => [r.relname, { seqRows: Number(r.seq) }]));
}

/**
 * Samples what the benchmark database's backends are doing every 100 ms: running on CPU, waiting for a lock
 * (a hot row), for I/O or the WAL, or idle. The average number of backends in each state says where time goes.
 */
export function sampleWaits(db: Client, dbName: string) {
  const totals = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await db.query(
        `SELECT CASE WHEN state = 'active' AND wait_event IS NULL THEN 'active: on CPU'
                     WHEN state = 'active' THEN 'active: ' || wait_event_type || '/' || wait_event
                     ELSE coalesce(state, '?') || coalesce(': ' || wait_event_type || '/' || wait_event, '') END AS what,
                count(*)::int AS n
         FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() GROUP BY 1`,
        [dbName],
      );
      samples++;
      for (const r of rows) totals.set(r.what, (totals.get(r.what) ?? 0) + r.n);
      await sleep(100);
    }
  })().catch(() => {
    // A phase that failed leaves its sampler running while the client is closed: the phase's error is the one to show.
  });
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return Object.fromEntries(
        [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / Math.max(samples, 1)).toFixed(2)]),
      );
    },
  };
}

// ------------------------------------------------------------------------------------------------ load

export interface LoadRun {
  name: string;
  base: string;
  /** The API process (its CPU is reported). */
  serverPid: number;
  db: Client;
  dbName: string;
  connections: number;
  duration: number;
  /** autocannon `requests` entries (method, path, headers, body or setupRequest). */
  requests: Array<Record<string, unknown>>;
  /** autocannon's `[<id>]` replacement in bodies. */
  idReplacement?: boolean;
}

/**
 * Drives the API with autocannon and reports throughput, latency percentiles, status codes, the CPU used by the
 * API process, the database's backends and this process (the load generator), backend wait states sampled every
 * 100 ms, and rows read by sequential scans per successful request.
 */
export async function driveLoad(run: LoadRun): Promise<Record<string, unknown>> {
  const { db, dbName, serverPid } = run;
  const load0 = loadavg()[0];
  const cpu0 = cpuTimes(serverPid);
  const self0 = process.cpuUsage();
  const backends0 = await backendCpu(db, dbName);
  const tables0 = await tableScans(db);
  const waits = sampleWaits(db, dbName);
  const result = await autocannon({
    url: run.base,
    connections: run.connections,
    duration: run.duration,
    timeout: 10,
    idReplacement: run.idReplacement ?? false,
    requests: run.requests,
  });
  const waitSummary = await waits.stop();
  const cpu1 = cpuTimes(serverPid);
  const self1 = process.cpuUsage(self0);
  const backends1 = await backendCpu(db, dbName);
  await sleep(600); // table statistics reach pg_stat_user_tables with a delay of up to 500 ms
  const tables1 = await tableScans(db);
  const backendSeconds = backendSecondsBetween(backends0, backends1);
  const seconds = result.duration;
  const ok = result['2xx'];
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, (v as { count: number }).count]),
  );
  return {
    scenario: run.name,
    connections: run.connections,
    seconds,
    requests: result.requests.total,
    ok_per_second: Math.round(ok / seconds),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    non_2xx: result.non2xx,
    status_codes: statusCodes,
    server_cpu_percent: Math.round(((cpu1 - cpu0) / seconds) * 100),
    // Load-independent: what one fully available core of the API process would carry at this mix.
    ok_per_server_cpu_second: cpu1 > cpu0 ? Math.round(ok / (cpu1 - cpu0)) : null,
    ok_per_postgres_cpu_second: backendSeconds > 0 ? Math.round(ok / backendSeconds) : null,
    postgres_backends_cpu_percent: Math.round((backendSeconds / seconds) * 100),
    load_generator_cpu_percent: Math.round(((self1.user + self1.system) / 1e6 / seconds) * 100),
    loadavg_1m_before: +load0.toFixed(2),
    loadavg_1m_after: +loadavg()[0].toFixed(2),
    db_backends_by_wait: waitSummary,
    // Rows read by sequential scans per successful request, by table: a full-table scan on the hot path shows here.
    seq_rows_read_per_ok: Object.fromEntries(
      [...tables1.entries()]
        .map(([table, t]) => [table, ok > 0 ? +((t.seqRows - (tables0.get(table)?.seqRows ?? 0)) / ok).toFixed(1) : 0] as const)
        .filter(([, v]) => v >= 1)
        .sort((a, b) => b[1] - a[1]),
    ),
  } as Record<string, unknown>;
}

/** One summary line of a driveLoad() result. */
export function loadLine(r: Record<string, any>, width = 40): string {
  return `${String(r.scenario).padEnd(width)} ${String(r.ok_per_second).padStart(6)} ok/s (${r.ok_per_server_cpu_second}/server CPU-s)  p50 ${String(r.latency_ms.p50).padStart(4)} ms  p99 ${String(r.latency_ms.p99).padStart(5)} ms  errors ${r.errors}  timeouts ${r.timeouts}  non-2xx ${r.non_2xx}  CPU: server ${r.server_cpu_percent}% postgres ${r.postgres_backends_cpu_percent}% autocannon ${r.load_generator_cpu_percent}%`;
}

/** Nearest-rank percentiles of a list of numbers (milliseconds, usually). */
export function percentiles(values: number[], points = [50, 90, 99]): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN;
  const out: Record<string, number> = {};
  for (const p of points) out[`p${p}`] = Math.round(at(p));
  out.max = Math.round(sorted[sorted.length - 1] ?? NaN);
  return out;
}

// ------------------------------------------------------------------------------------------------ open loop

/** One request of an open-loop run: where it goes and what it carries. */
export interface PacedRequest {
  base: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface OpenLoopRun {
  /** performance.now() when the schedule began: request i was due at start + i / rate seconds. */
  start: number;
  sent: number;
  /** performance.now() each request was sent. */
  sentAt: number[];
  /** Milliseconds from sent to the whole answer read; NaN for a request that failed (connection error, time-out). */
  responseMs: number[];
  /** HTTP status per request; 0 for one that failed. */
  status: number[];
  statuses: Record<string, number>;
  errors: number;
  /** Seconds from the start until the last answer (or failure). */
  seconds: number;
  /** Seconds from the start until the last request was sent: above `seconds` of the schedule, the sender fell behind. */
  sendSeconds: number;
}

/**
 * An open-loop generator: the i-th request is sent at i/rate seconds whatever the answers, so a slow server
 * cannot slow the arrivals down (no coordinated omission). Keep-alive connections, up to 512 per API.
 */
export async function openLoop(rate: number, seconds: number, request: (i: number) => PacedRequest): Promise<OpenLoopRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const urls = new Map<string, URL>();
  const total = Math.round(rate * seconds);
  const sentAt: number[] = new Array(total);
  const responseMs: number[] = new Array(total).fill(NaN);
  const status: number[] = new Array(total).fill(0);
  const statuses: Record<string, number> = {};
  let errors = 0;
  let lastSent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    if (total === 0) return resolve();
    let sent = 0;
    let finished = 0;
    const fire = (i: number) => {
      const r = request(i);
      let url = urls.get(r.base);
      if (!url) urls.set(r.base, (url = new URL(r.base)));
      const t = performance.now();
      sentAt[i] = t;
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: r.path,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body), ...r.headers },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            responseMs[i] = performance.now() - t;
            status[i] = res.statusCode!;
            statuses[res.statusCode!] = (statuses[res.statusCode!] ?? 0) + 1;
            if (++finished === total) resolve();
          });
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        if (++finished === total) resolve();
      });
      req.end(r.body);
    };
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) fire(sent++);
      if (sent >= total) {
        lastSent = performance.now();
        clearInterval(timer);
      }
    }, 1);
  });
  const end = performance.now();
  agent.destroy();
  return {
    start,
    sent: total,
    sentAt,
    responseMs,
    status,
    statuses,
    errors,
    seconds: (end - start) / 1000,
    sendSeconds: ((total === 0 ? start : lastSent) - start) / 1000,
  };
}

/** A rate rounded to a step: tens below 500/s, fifties above, never under 10. */
export function roundRate(rate: number): number {
  return Math.max(10, rate < 500 ? Math.floor(rate / 10) * 10 : Math.floor(rate / 50) * 50);
}

/**
 * Looks for the highest rate a run holds: runs at `start`, then ×1.25 while every run so far held (when `canGoUp`,
 * up to `max`), or ×0.8 while none has; stops at the first rate that changes the answer, or after `attempts` runs.
 */
export async function stepRates<T>(options: {
  start: number;
  canGoUp: boolean;
  max?: number;
  attempts: number;
  run: (rate: number, attempt: number) => Promise<T>;
  held: (result: T) => boolean;
}): Promise<{ tried: Array<{ rate: number; held: boolean; result: T }>; best: { rate: number; held: boolean; result: T } | null }> {
  const tried: Array<{ rate: number; held: boolean; result: T }> = [];
  let rate = options.start;
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const result = await options.run(rate, attempt);
    const held = options.held(result);
    tried.push({ rate, held, result });
    const anyFailed = tried.some((t) => !t.held);
    const anyHeld = tried.some((t) => t.held);
    const next =
      held && options.canGoUp && !anyFailed
        ? roundRate(Math.min(options.max ?? Infinity, rate * 1.25)) // try higher
        : !held && !anyHeld
          ? roundRate(rate * 0.8) // try lower
          : rate;
    if (next === rate) break;
    rate = next;
  }
  const best = tried.filter((t) => t.held).sort((a, b) => b.rate - a.rate)[0] ?? null;
  return { tried, best };
}

// ------------------------------------------------------------------------------------------------ profiles

/** Self time of a process by package (or Node internals), from the V8 CPU profile it wrote at exit. */
export function summariseProfile(dir: string, label = 'server_profile') {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return { error: `no profile in ${dir}` };
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)!.callFrame;
    const url = frame.url;
    const pkg = url.includes('node_modules/')
      ? url
          .split('node_modules/')
          .pop()!
          .split('/')
          .slice(0, url.split('node_modules/').pop()!.startsWith('@') ? 2 : 1)
          .join('/')
      : url.includes('/dist/src/')
        ? `app: ${url.split('/dist/src/')[1].split('/')[0]}`
        : url.startsWith('node:')
          ? 'node internals'
          : frame.functionName === '(idle)' || frame.functionName === '(program)' || frame.functionName === '(garbage collector)'
            ? frame.functionName
            : url || '(native)';
    if (frame.functionName === '(idle)') return;
    total += us;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${frame.lineNumber}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => ({ name: k, percent: +((v / total) * 100).toFixed(1) }));
  const summary = { busy_seconds: +(total / 1e6).toFixed(1), by_package: top(byPackage, 20), by_function: top(byFunction, 20) };
  console.log(JSON.stringify({ [label]: summary }, null, 2));
  return summary;
}

// ------------------------------------------------------------------------------------------------ round trips

/**
 * A TCP proxy in front of Postgres that counts round trips: the frontend messages after which node-postgres
 * waits for the server, Query (simple protocol) and Sync (extended protocol: Parse/Bind/Describe/Execute/Sync per
 * parameterised query, one query at a time per connection). With `trace` set, the first characters of each
 * round trip's SQL are appended to it, prefixed by the connection's number.
 */
export class PgRoundTripCounter {
  roundTrips = 0;
  trace: string[] | null = null;
  port = 0;
  private server!: ReturnType<typeof createServer>;
  private readonly sockets = new Set<Socket>();
  private connections = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** A counter in front of the server of `databaseUrl`. */
  static async for(databaseUrl: string): Promise<PgRoundTripCounter> {
    const u = new URL(databaseUrl);
    return new PgRoundTripCounter({ host: u.hostname, port: Number(u.port || 5432) }).start();
  }

  /** A copy of `databaseUrl` that connects through this proxy. */
  url(databaseUrl: string): string {
    const u = new URL(databaseUrl);
    u.host = `127.0.0.1:${this.port}`;
    return u.toString();
  }

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const id = ++this.connections;
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(client).add(upstream);
      let pendingSql: string | null = null;
      const sqlOf = (body: Buffer, skipName: boolean) => {
        let text = body.toString('utf8');
        if (skipName) text = text.slice(text.indexOf('\0') + 1);
        return text
          .slice(0, Math.max(0, text.indexOf('\0')))
          .replace(/\s+/g, ' ')
          .trim();
      };
      const parse = frontendParser((type, body) => {
        if (type === 0x50 /* P */) pendingSql = sqlOf(body!, true);
        else if (type === 0x51 /* Q */ || type === 0x53 /* S */) {
          this.roundTrips++;
          this.trace?.push(`c${id}: ${(type === 0x51 ? sqlOf(body!, false) : (pendingSql ?? '(prepared)')).slice(0, 90)}`);
          pendingSql = null;
        }
      });
      client.on('data', (chunk: Buffer) => {
        parse(chunk);
        upstream.write(chunk);
      });
      upstream.pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Calls onMessage with the type byte of every frontend message (and the body of Parse and Query messages); the
 * startup packet (and an SSLRequest before it) has no type byte.
 */
function frontendParser(onMessage: (type: number, body: Buffer | null) => void) {
  let startup = true;
  let header = Buffer.alloc(0);
  let remaining = 0; // body bytes of the current message still to come
  let type = 0; // 0: the startup packet, not reported
  let body: Buffer[] | null = null; // collected for P and Q only
  return (chunk: Buffer) => {
    let i = 0;
    while (i < chunk.length) {
      if (remaining > 0) {
        const n = Math.min(remaining, chunk.length - i);
        body?.push(chunk.subarray(i, i + n));
        remaining -= n;
        i += n;
        if (remaining === 0 && type !== 0) onMessage(type, body ? Buffer.concat(body) : null);
        continue;
      }
      const headerLength = startup ? 4 : 5;
      const take = chunk.subarray(i, i + headerLength - header.length);
      header = Buffer.concat([header, take]);
      i += take.length;
      if (header.length < headerLength) break;
      if (startup) {
        const length = header.readInt32BE(0);
        type = 0;
        body = null;
        remaining = length - 4;
        // 8 bytes: an SSLRequest/GSSENCRequest, after which the startup packet follows; otherwise typed messages.
        if (length !== 8) startup = false;
      } else {
        type = header[0];
        remaining = header.readInt32BE(1) - 4;
        body = type === 0x50 || type === 0x51 ? [] : null;
        if (remaining === 0) onMessage(type, body ? Buffer.alloc(0) : null);
      }
      header = Buffer.alloc(0);
    }
  };
}

/**
 * A worker's trace without the outbox relay's polling (its claim, its relayed_at update and the BEGIN/COMMIT
 * around them on the same connection) and the callback deliverer's claims, which run every 50 ms whatever the jobs
 * do (a claim that finds a delivery takes up to 100 at once, so it costs a delivery about nothing).
 */
export function withoutRelayPolls(trace: string[]): string[] {
  const isRelay = (line: string) => /FROM outbox WHERE relayed_at IS NULL|UPDATE outbox SET relayed_at|: WITH replays AS/.test(line);
  const isTx = (line: string) => /: (BEGIN|START TRANSACTION|COMMIT|ROLLBACK)$/.test(line);
  const conn = (line: string) => line.slice(0, line.indexOf(':'));
  const drop = new Set<number>();
  trace.forEach((line, i) => {
    if (!isRelay(line)) return;
    drop.add(i);
    for (const dir of [-1, 1]) {
      for (let j = i + dir; j >= 0 && j < trace.length; j += dir) {
        if (conn(trace[j]) !== conn(line)) continue;
        if (isTx(trace[j])) drop.add(j);
        if (isTx(trace[j]) || !isRelay(trace[j])) break;
      }
    }
  });
  // A transaction already open when the trace began (the relay's, between polls) ends in it without its start.
  const seen = new Set<string>();
  trace.forEach((line, i) => {
    if (drop.has(i) || seen.has(conn(line))) return;
    seen.add(conn(line));
    if (/: (COMMIT|ROLLBACK)$/.test(line)) drop.add(i);
  });
  return trace.filter((_, i) => !drop.has(i));
}

// ------------------------------------------------------------------------------------------------ reference ceiling

/** What the reference ceiling measured on this machine, in transfers/s (its last output line). */
export interface CeilingFigures {
  sql_random: number;
  sql_hot: number;
  sql_batch10_random: number;
  sql_batch10_hot: number;
  http_random: number;
  http_hot: number;
}

export type Ceiling =
  | ({ skipped: false; script: string; seconds: number; connections: number; wall_seconds: number } & CeilingFigures)
  | { skipped: true; reason: string };

/**
 * The ceiling script: BENCH_CEILING when set, else ../shared/bench/ceiling/run.sh beside the project, else
 * /work/shared/bench/ceiling/run.sh (worktrees live elsewhere). BENCH_CEILING=skip, or no script there, skips it.
 */
function ceilingScript(): { script: string } | { reason: string } {
  const configured = process.env.BENCH_CEILING;
  if (configured === 'skip') return { reason: 'BENCH_CEILING=skip' };
  const candidates = configured
    ? [configured]
    : [join(ROOT, '..', 'shared', 'bench', 'ceiling', 'run.sh'), '/work/shared/bench/ceiling/run.sh'];
  const script = candidates.find((c) => existsSync(c));
  return script ? { script } : { reason: `no ceiling script at ${candidates.join(' or ')}` };
}

/**
 * Runs the reference ceiling (a lean SQL transfer under pgbench, and behind a bare Fastify + pg server under
 * autocannon) with the bench's seconds and connections, before the bench's own load, so its figures and the
 * bench's come from the same machine in the same state. Its output is passed through; a failed or skipped run
 * is reported as such and the bench goes on without ratios.
 */
export async function runCeiling(seconds = DURATION, connections = CONNECTIONS): Promise<Ceiling> {
  const found = ceilingScript();
  if ('reason' in found) {
    log(`reference ceiling skipped: ${found.reason}; figures are printed without ratios`);
    return { skipped: true, reason: found.reason };
  }
  log(`reference ceiling: ${found.script} ${ROOT} ${seconds} ${connections} (about ${6 * seconds + 10} s)`);
  const t0 = Date.now();
  const child = spawn('bash', [found.script, ROOT, String(seconds), String(connections)], {
    // A port of its own: its default (3990) may be taken by another bench on the machine.
    env: { ...process.env, CEILING_PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let pending = '';
  let last = null as string | null; // the last JSON line: every figure
  const take = (line: string) => {
    console.log(`[ceiling] ${line}`);
    if (line.trim().startsWith('{')) last = line;
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop()!;
    lines.forEach(take);
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (pending) take(pending);
  if (code !== 0 || !last) {
    const reason = `the ceiling exited with code ${code}${last ? '' : ' and printed no JSON line'}`;
    log(`reference ceiling failed: ${reason}; figures are printed without ratios`);
    return { skipped: true, reason };
  }
  const figures = JSON.parse(last) as CeilingFigures;
  return { skipped: false, script: found.script, seconds, connections, wall_seconds: (Date.now() - t0) / 1000, ...figures };
}

/** The ceiling a figure is compared with: transfers between random accounts, or through one hot account. */
export type CeilingKind = 'http_random' | 'http_hot';

/** Issues 10's and 20's targets, as multiples of the same-run ceiling (at 32 connections). */
export const CEILING_TARGETS = {
  transfersRandom: { ratio: 1.0, p99_ms: 50 },
  transfersHot: { ratio: 1.5 },
  credits: { ratio: 1.0 },
  charges: { ratio: 1.0 },
  checkouts: { ratio: 1.0 },
  settlementAndCallback: { ratio: 0.5 },
  /** Payouts and airtime recipients reaching their final status and called back (issue 20). */
  payoutsFinalAndCalledBack: { ratio: 0.5 },
  /** Payouts accepted through one merchant's float, against http_hot (issue 20). */
  payoutsAcceptedHot: { ratio: 1.5 },
  /** bench:mixed, the highest rate held (issue 20). */
  mixedHeld: { ratio: 0.5 },
} as const;

export interface Throughput {
  label: string;
  /** Per second; null when the phase produced no rate (e.g. no sustained end-to-end rate). */
  per_second: number | null;
  ceiling: CeilingKind;
  p99_ms?: number;
  target?: { ratio: number; p99_ms?: number };
}

function withinP99(f: Throughput): boolean {
  return f.target?.p99_ms === undefined || (f.p99_ms !== undefined && f.p99_ms <= f.target.p99_ms);
}

/**
 * Prints every throughput beside its ratio to the relevant ceiling, and met/missed for those with a target; the
 * rows go into the report (BENCH_RESULTS) as `against_ceiling`.
 */
export function printAgainstCeiling(report: Record<string, unknown>, figures: Throughput[]): void {
  const ceiling = report.ceiling as Ceiling | undefined;
  const rows = figures.map((f) => {
    const reference = ceiling && !ceiling.skipped ? ceiling[f.ceiling] : null;
    const ratio = reference && f.per_second !== null ? +(f.per_second / reference).toFixed(2) : null;
    // No rate (e.g. no sustained end-to-end rate) misses its target; without a ceiling nothing is judged.
    const met = !f.target || !reference ? null : f.per_second !== null && f.per_second >= f.target.ratio * reference && withinP99(f);
    return { ...f, ceiling_per_second: reference, ratio, met };
  });
  report.against_ceiling = rows;
  console.log(
    ceiling && !ceiling.skipped
      ? `against the reference ceiling of this sitting (${ceiling.seconds} s, ${ceiling.connections} connections): http random ${ceiling.http_random}/s, http hot ${ceiling.http_hot}/s; sql random ${ceiling.sql_random}/s, hot ${ceiling.sql_hot}/s, batch of 10 random ${ceiling.sql_batch10_random}/s, hot ${ceiling.sql_batch10_hot}/s`
      : `no reference ceiling (${ceiling?.skipped ? ceiling.reason : 'not run'}): no ratios, targets not judged`,
  );
  for (const r of rows) {
    const rate = r.per_second === null ? 'none' : `${r.per_second}/s`;
    const ratio = r.ratio === null ? '' : `  ${r.ratio.toFixed(2)}× ${r.ceiling}`;
    const target = r.target
      ? `  target ≥ ${r.target.ratio.toFixed(1)}×${r.target.p99_ms !== undefined ? ` with p99 ≤ ${r.target.p99_ms} ms (p99 ${r.p99_ms ?? '?'} ms)` : ''}: ${r.met === null ? 'not judged' : r.met ? 'met' : 'MISSED'}`
      : '';
    console.log(`  ${r.label.padEnd(48)} ${rate.padStart(9)}${ratio}${target}`);
  }
}

// ------------------------------------------------------------------------------------------------ gateway benches: resources

export interface Snapshot {
  at: number;
  api: number;
  workers: number;
  redis: number;
  self: number;
  machine: { busy: number; total: number };
  backends: Map<number, number>;
  xactCommit: number;
  xactRollback: number;
  wal: { records: number; bytes: number; syncs: number; writes: number };
  redisCommands: number;
  redisScripts: number;
}

/** CPU of every process involved, and Postgres/Redis counters, between two snapshots, per unit of work. */
export class Meter {
  constructor(
    readonly db: Client,
    readonly dbName: string,
    private readonly procs: Processes,
    private readonly redis: Redis,
  ) {}

  async snapshot(): Promise<Snapshot> {
    const safe = (pid: number | null | undefined) => {
      try {
        return pid ? cpuTimes(pid) : 0;
      } catch {
        return 0;
      }
    };
    const pg = await pgCounters(this.db, this.dbName);
    const info = await this.redis.info('stats');
    const commandStats = await this.redis.info('commandstats');
    const scripts = [...commandStats.matchAll(/cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro|fcall):calls=(\d+)/g)].reduce(
      (sum, x) => sum + Number(x[1]),
      0,
    );
    const self = process.cpuUsage();
    return {
      at: performance.now(),
      api: this.procs.apis.reduce((sum, a) => sum + safe(a.pid), 0),
      workers: this.procs.workers.reduce((sum, w) => sum + safe(w.pid), 0),
      redis: safe(this.procs.redisPid),
      self: (self.user + self.system) / 1e6,
      machine: machineCpu(),
      backends: await backendCpu(this.db, this.dbName),
      xactCommit: pg.commits,
      xactRollback: pg.rollbacks,
      wal: { records: pg.walRecords, bytes: pg.walBytes, syncs: pg.walFlushes, writes: pg.walWrites },
      redisCommands: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0),
      redisScripts: scripts,
    };
  }

  /**
   * Per unit: CPU milliseconds of each process, Postgres commits, WAL records/bytes/flushes (pg_stat_wal is
   * server-wide: other databases' writes would count too) and Redis commands; and each process's share of the
   * window (100 % = one core).
   */
  costs(a: Snapshot, b: Snapshot, units: number, unit: string) {
    const seconds = (b.at - a.at) / 1000;
    const pg = backendSecondsBetween(a.backends, b.backends);
    const cpu = { api: b.api - a.api, workers: b.workers - a.workers, postgres: pg, redis: b.redis - a.redis, bench: b.self - a.self };
    const machineBusy = b.machine.busy - a.machine.busy;
    const machineTotal = b.machine.total - a.machine.total;
    const per = (v: number, digits = 2) => (units > 0 ? +(v / units).toFixed(digits) : null);
    return {
      unit,
      units,
      seconds: +seconds.toFixed(2),
      cpu_ms: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, per(v * 1000, 3)])),
      cpu_percent_of_one_core: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round((v / seconds) * 100)])),
      machine_busy_percent: machineTotal > 0 ? Math.round((machineBusy / machineTotal) * 100) : null,
      postgres_commits: per(b.xactCommit - a.xactCommit),
      postgres_rollbacks: per(b.xactRollback - a.xactRollback),
      wal_records: per(b.wal.records - a.wal.records, 1),
      wal_bytes: per(b.wal.bytes - a.wal.bytes, 0),
      wal_flushes: per(b.wal.syncs - a.wal.syncs, 3),
      // Commands run inside BullMQ's Lua scripts count too; redis_scripts are the script calls (one round trip each).
      redis_commands: per(b.redisCommands - a.redisCommands, 1),
      redis_scripts: per(b.redisScripts - a.redisScripts, 1),
    };
  }
}

export interface Processes {
  /** The first API process (the one autocannon phases drive). */
  api: ChildProcess;
  /** Every API process; their CPU is reported together as the API's. */
  apis: ChildProcess[];
  workers: ChildProcess[];
  redisPid: number | null;
}

// ------------------------------------------------------------------------------------------------ gateway benches: setting

/** The seeded merchant: an API key, a KES service with a FIXED fee of 10 whose settlement wallet is the float. */
export interface Merchant {
  clientId: string;
  clientCode: string;
  serviceCode: string;
  serviceId: string;
  settlementAccountNumber: string;
  consumerKey: string;
  consumerSecret: string;
  token: string;
  /** The seeded wallet-service user (POST /api/v1/auth/login). */
  walletUsername: string;
  walletPassword: string;
}

/**
 * What a gateway benchmark runs in: a redis-server of its own (or BENCH_REDIS_URL), a migrated database of its own,
 * a callback receiver, a merchant seeded with `admin seed` whose callbacks of every kind go to the receiver, the API
 * (`node dist/src/main.js api`, `apis` of them on ports of their own, default one) and a gateway token; workers when
 * asked. close() undoes whatever start() got to.
 */
export class GatewayBench {
  readonly admin = new Client({ connectionString: SERVER_URL });
  readonly database: BenchDatabase;
  readonly receiver = new Receiver();
  db: Client | null = null;
  redis: Redis | null = null;
  redisUrl = '';
  /** The first API's address (what autocannon phases drive). */
  base = '';
  /** Every API's address, in start order. */
  bases: string[] = [];
  merchant!: Merchant;
  procs!: Processes;
  meter!: Meter;
  /** The environment of every child (API, workers, CLI). */
  env: Record<string, string> = {};
  private ownRedis: OwnRedis | null = null;
  private readonly children: ChildProcess[] = [];
  private readonly profileDirs: Array<{ label: string; dir: string }> = [];
  private generation = 0;

  constructor(
    prefix: string,
    private readonly options: { settleDelayMs: number; profile: boolean; apis?: number; facts?: Record<string, unknown> },
  ) {
    this.database = newBenchDatabase(prefix);
  }

  /** Everything up to a signed-in merchant and running APIs; machine facts go into report.machine. */
  async start(report: Record<string, unknown>): Promise<void> {
    await this.admin.connect();
    this.ownRedis = process.env.BENCH_REDIS_URL ? null : await startOwnRedis();
    this.redisUrl = process.env.BENCH_REDIS_URL ?? this.ownRedis!.url;
    this.redis = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
    const redisVersion = /redis_version:(\S+)/.exec(await this.redis.info('server'))?.[1];
    report.machine = await machineFacts(this.admin, {
      redis: `${redisVersion} (${this.ownRedis ? `own redis-server, pid ${this.ownRedis.pid}` : 'BENCH_REDIS_URL'})`,
      sandbox_settle_delay_ms: this.options.settleDelayMs,
      api_processes: this.options.apis ?? 1,
      ...this.options.facts,
      postgres_round_trip: await pgRoundTripCost(),
    });
    console.log(JSON.stringify({ machine: report.machine }, null, 2));

    await createBenchDatabase(this.admin, this.database);
    this.db = new Client({ connectionString: this.database.url });
    await this.db.connect();
    this.env = {
      DATABASE_URL: this.database.url,
      REDIS_URL: this.redisUrl,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: String(this.options.settleDelayMs),
    };

    await this.receiver.start();
    log(`callback receiver on ${this.receiver.base}`);
    const t0 = Date.now();
    const r = this.receiver.base;
    const seeded = await this.cli(['seed', '--callback-url', `${r}/cb`, '--callback-username', 'u', '--callback-password', 'p']);
    log(`seeded merchant ${seeded.client_code} (service ${seeded.service_code}) in ${Date.now() - t0} ms`);

    for (let i = 0; i < (this.options.apis ?? 1); i++) this.bases.push(`http://127.0.0.1:${await freePort()}`);
    this.base = this.bases[0];
    this.procs = { api: null as unknown as ChildProcess, apis: [], workers: [], redisPid: this.ownRedis?.pid ?? null };
    await this.startApis();

    const auth = await postJson(this.base, '/v1/auth', { consumer_key: seeded.consumer_key, consumer_secret: seeded.consumer_secret });
    const [row] = (
      await this.db.query(
        `SELECT c.id AS client_id, s.id AS service_id FROM clients c JOIN client_services s ON s.client_id = c.id WHERE c.code = $1 AND s.code = $2`,
        [seeded.client_code, seeded.service_code],
      )
    ).rows;
    this.merchant = {
      clientId: row.client_id,
      clientCode: seeded.client_code,
      serviceCode: seeded.service_code,
      serviceId: row.service_id,
      settlementAccountNumber: seeded.settlement_account_number,
      consumerKey: seeded.consumer_key,
      consumerSecret: seeded.consumer_secret,
      token: auth.access_token,
      walletUsername: seeded.username,
      walletPassword: seeded.password,
    };
    this.meter = new Meter(this.db, this.database.name, this.procs, this.redis);
  }

  /** One API per address of `bases`, with the bench's environment; waits until every one is live. */
  private async startApis(): Promise<void> {
    const suffix = this.generation > 0 ? `_${this.generation}` : '';
    for (const [i, base] of this.bases.entries()) {
      const label = this.bases.length > 1 ? `api${i + 1}${suffix}` : `api${suffix}`;
      const api = startRole('api', { env: { ...this.env, PORT: new URL(base).port }, profileDir: this.profileDir(label) });
      this.children.push(api);
      this.procs.apis.push(api);
    }
    this.procs.api = this.procs.apis[0];
    for (const [i, base] of this.bases.entries()) {
      await waitForLive(base, this.procs.apis[i]);
      log(`API child pid ${this.procs.apis[i].pid} listening on ${base}`);
    }
  }

  /** `node dist/src/admin/cli.js <args> --json` against the bench's database; its JSON output. */
  async cli(args: string[]): Promise<Record<string, string>> {
    const { code, stdout, stderr } = await cli([...args, '--json'], this.env);
    if (code !== 0) throw new Error(`cli ${args[0]} exited ${code}: ${stderr.trim()}`);
    return JSON.parse(stdout);
  }

  /** BENCH_PROFILE=1: a directory the process writes its V8 CPU profile into at exit, summarised by close(). */
  profileDir(label: string): string | null {
    if (!this.options.profile) return null;
    const dir = mkdtempSync(join(tmpdir(), `paygate-bench-prof-${label}-`));
    this.profileDirs.push({ label, dir });
    return dir;
  }

  startWorkers(count: number): void {
    const suffix = this.generation > 0 ? `_${this.generation}` : '';
    for (let i = 0; i < count; i++) {
      const worker = startRole('worker', { env: this.env, profileDir: this.profileDir(`worker${i + 1}${suffix}`) });
      this.children.push(worker);
      this.procs.workers.push(worker);
    }
    log(`started ${count} worker(s): pids ${this.procs.workers.map((w) => w.pid).join(', ')}`);
  }

  /**
   * Stops the APIs and workers and starts them again (same ports, `workers` workers) with `env` added to the
   * children's environment, e.g. another SANDBOX_SETTLE_DELAY_MS. Meter snapshots taken before span other
   * processes: take new ones.
   */
  async restart(env: Record<string, string>, workers: number): Promise<void> {
    await this.stopChildren();
    this.env = { ...this.env, ...env };
    this.generation++;
    this.procs.apis.splice(0);
    this.procs.workers.splice(0);
    await this.startApis();
    this.startWorkers(workers);
  }

  /**
   * autocannon POSTs to a gateway route with the merchant's token and a fresh `[<id>]` per request, measured
   * with the per-request costs of every process (Meter).
   */
  async drive(name: string, unit: string, path: string, body: string, duration = DURATION) {
    const before = await this.meter.snapshot();
    const result = await driveLoad({
      name,
      base: this.base,
      serverPid: this.procs.api.pid!,
      db: this.db!,
      dbName: this.database.name,
      connections: CONNECTIONS,
      duration,
      idReplacement: true,
      requests: [{ method: 'POST', path, headers: { 'content-type': 'application/json', 'x-access-token': this.merchant.token }, body }],
    });
    const after = await this.meter.snapshot();
    const ok = Number((result.status_codes as Record<string, number>)['200'] ?? 0);
    await this.untilDatabaseIdle();
    return { ...result, per_request: this.meter.costs(before, after, ok, unit) };
  }

  /**
   * Waits until no backend of the database is busy for 0.5 s: autocannon abandons the requests in flight when a
   * phase ends, and the API still commits them, so the next phase (or a backlog count) starts from a settled state.
   */
  async untilDatabaseIdle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quietSince: number | null = null;
    while (Date.now() < deadline) {
      const [{ busy }] = (
        await this.db!.query(
          `SELECT count(*)::int AS busy FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state <> 'idle'`,
          [this.database.name],
        )
      ).rows;
      if (busy > 0) quietSince = null;
      else if (quietSince === null) quietSince = Date.now();
      else if (Date.now() - quietSince >= 500) return;
      await sleep(100);
    }
    log(`the database was still busy after ${timeoutMs / 1000} s`);
  }

  /** Stops the API and the workers (round trips are then counted with processes of their own). */
  async stopChildren(): Promise<void> {
    for (const child of this.children.splice(0)) await stopChild(child);
  }

  /** `ledger:verify --json`: the invariants (a)–(d) over everything the run wrote. */
  async ledgerVerify() {
    const t0 = Date.now();
    const { code, stdout, stderr } = await cli(['ledger:verify', '--json'], this.env);
    const output = stdout.trim() ? JSON.parse(stdout) : null;
    return { exit_code: code, seconds: (Date.now() - t0) / 1000, ...(output ?? {}), ...(stderr.trim() ? { stderr: stderr.trim() } : {}) };
  }

  async close(report: Record<string, unknown>): Promise<void> {
    await this.stopChildren();
    for (const { label, dir } of this.profileDirs) report[`${label}_profile`] = summariseProfile(dir, `${label}_profile`);
    this.redis?.disconnect();
    await this.db?.end().catch(() => undefined);
    await this.receiver.close();
    await dropBenchDatabase(this.admin, this.database.name);
    await this.admin.end();
    await this.ownRedis?.stop();
  }
}

// ------------------------------------------------------------------------------------------------ gateway benches: requests

/** A number the sandbox rails succeed for, as payer and as recipient (provider contract §7). */
export const SANDBOX_PAYER = '254712345678';

/** POST /v1/mobile-money/charge: 100 KES from SANDBOX_PAYER (settled successfully), called back to the receiver. */
export function chargeBody(bench: GatewayBench, reference: string): string {
  const m = bench.merchant;
  return JSON.stringify({
    external_reference: reference,
    client_code: m.clientCode,
    origin_channel_code: 'API',
    originator_msisdn: SANDBOX_PAYER,
    payer_msisdn: SANDBOX_PAYER,
    payer_name: 'Bench Payer',
    payer_email: 'payer@example.com',
    service_code: m.serviceCode,
    account_number: 'INV-BENCH',
    invoice_number: '',
    currency_code: 'KES',
    country_code: 'KEN',
    amount: '100',
    add_transaction_charge: false,
    transaction_charge: '0',
    payment_method_code: 'MMONEY_KEN',
    extra_data: { bench: true },
    description: 'Bench charge',
    notify_client: false,
    notify_originator: false,
    callback_url: `${bench.receiver.base}/cb`,
  });
}

/** POST /v1/payouts/initiate: MOBILE via MMONEY_KEN to SANDBOX_PAYER (paid), 100 KES, called back to the receiver. */
export function payoutBody(bench: GatewayBench, reference: string): string {
  return JSON.stringify({
    payout_reference: reference,
    service_code: bench.merchant.serviceCode,
    recipient_first_name: 'Bench',
    recipient_last_name: 'Recipient',
    destination_type: 'MOBILE',
    destination_name: 'MMONEY_KEN',
    recipient_phone_number: SANDBOX_PAYER,
    recipient_account_number: SANDBOX_PAYER,
    recipient_bank_code: '',
    recipient_account_name: 'Bench Recipient',
    source_currency: 'KES',
    destination_currency: 'KES',
    exchange_rate: '1',
    sender_amount: '100',
    sender_country_code: 'KEN',
    recipient_amount: '100',
    payment_description: 'Bench payout',
    callback_url: `${bench.receiver.base}/payout`,
  });
}

/**
 * The merchant's callback endpoint: answers 200 and notes when each reference's callback arrived (the reference
 * is the body's external_reference, merchant_transaction_id or payout_reference), and for airtime, whose request
 * calls back once per recipient, when each recipient's did.
 */
export class Receiver {
  /** performance.now() of the first callback per reference. */
  readonly arrivals = new Map<string, number>();
  /** performance.now() of the first callback per airtime recipient, keyed by recipientKey(). */
  readonly recipientArrivals = new Map<string, number>();
  /** performance.now() of every callback, in arrival order. */
  readonly times: number[] = [];
  /** performance.now() of each reference's first callback, in arrival order. */
  readonly firstTimes: number[] = [];
  duplicates = 0;
  uniqueReferences = 0;
  base = '';
  private server: Server | null = null;
  private readonly wallOffset = Date.now() - performance.now();

  get count(): number {
    return this.times.length;
  }

  wallOf(t: number): number {
    return t + this.wallOffset;
  }

  async start(): Promise<this> {
    this.server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        let reference = '';
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          reference = String(body.external_reference ?? body.merchant_transaction_id ?? body.payout_reference ?? '');
          if (body.phone_number !== undefined && body.external_reference !== undefined) {
            const key = recipientKey(String(body.external_reference), String(body.phone_number));
            if (!this.recipientArrivals.has(key)) this.recipientArrivals.set(key, at);
          }
        } catch {
          // not JSON: counted, not matched
        }
        this.times.push(at);
        if (this.arrivals.has(reference)) this.duplicates++;
        else {
          this.arrivals.set(reference, at);
          this.firstTimes.push(at);
          this.uniqueReferences++;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"acknowledgement_code":"900"}');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Waits until every reference has called back, or `timeoutMs` has passed. */
  async waitFor(references: string[], timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !references.every((r) => this.arrivals.has(r))) await sleep(20);
  }
}

/** An airtime recipient's callback key: the document's idempotency key, external_reference plus phone_number. */
export function recipientKey(reference: string, phoneNumber: string): string {
  return `${reference} ${phoneNumber.replace(/^\+/, '')}`;
}

interface OwnRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `redis-server --port N --save "" --appendonly no`, a child of this process. */
async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await sleep(50);
  }
  log(`redis-server pid ${child.pid} on ${url}`);
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_JS, ...args],
      { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

async function postJson(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} → ${res.status} ${text}`);
  return JSON.parse(text);
}

// ------------------------------------------------------------------------------------------------ gateway benches: drains

/** How long a drain waits for its callbacks (BENCH_DRAIN_TIMEOUT, seconds). */
export const DRAIN_TIMEOUT_S = Number(process.env.BENCH_DRAIN_TIMEOUT ?? 150);

/** What a drain's timeline samples every 2 s: counts from SQL (one row) and the depth of BullMQ queues. */
export interface DrainProgress {
  sql: string;
  queues: string[];
}

/**
 * Waits until `expected` more callbacks have reached the receiver, sampling how far the backlog has come. With
 * `count` 'references', a reference's callbacks after its first do not count (a local payout is called back at its
 * callback_url and at the client's payouts endpoint), nor do they in the rates.
 */
export async function watchDrain(
  bench: GatewayBench,
  name: string,
  expected: number,
  unit: string,
  progress: DrainProgress,
  count: 'callbacks' | 'references' = 'callbacks',
) {
  const { meter, receiver } = bench;
  const arrived = count === 'callbacks' ? receiver.times : receiver.firstTimes;
  const deliveredBefore = arrived.length;
  const callbacksBefore = receiver.count;
  log(`${name}: waiting for ${expected} callbacks`);
  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const t0 = performance.now();
  const timeline: Array<Record<string, number>> = [];
  let lastPrint = 0;
  while ((performance.now() - t0) / 1000 < DRAIN_TIMEOUT_S) {
    const delivered = arrived.length - deliveredBefore;
    if (performance.now() - lastPrint >= 2000 || delivered >= expected) {
      lastPrint = performance.now();
      const [s] = (await meter.db.query(progress.sql)).rows;
      const q = await queueDepths(bench.redis!, progress.queues);
      const point = { t: +((performance.now() - t0) / 1000).toFixed(1), delivered, ...s, ...q };
      timeline.push(point);
      log(`${name} ${JSON.stringify(point)}`);
    }
    if (delivered >= expected) break;
    await sleep(250);
  }
  const waitSummary = await waits.stop();
  const after = await meter.snapshot();
  const times = arrived.slice(deliveredBefore);
  const rates = rateOf(times);
  return {
    times,
    result: {
      scenario: name,
      expected,
      delivered: times.length,
      ...(count === 'references' ? { callbacks_received: receiver.count - callbacksBefore } : {}),
      drained: times.length >= expected,
      seconds: rates.seconds,
      deliveries_per_second: rates.average,
      deliveries_per_second_peak_1s: rates.peak,
      duplicates_at_receiver: receiver.duplicates,
      per_unit: meter.costs(before, after, times.length, unit),
      db_backends_by_wait: waitSummary,
      timeline,
    } as Record<string, unknown>,
  };
}

async function queueDepths(redis: Redis, queues: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const q of queues) {
    const [wait, active, delayed] = await Promise.all([
      redis.llen(`bull:${q}:wait`),
      redis.llen(`bull:${q}:active`),
      redis.zcard(`bull:${q}:delayed`),
    ]);
    out[`${q}_waiting`] = wait;
    out[`${q}_active`] = active;
    out[`${q}_delayed`] = delayed;
  }
  return out;
}

/** Average rate between the first and last timestamp (ms, performance.now()), and the busiest 1-s window. */
export function rateOf(times: number[]) {
  if (times.length < 2) return { seconds: 0, average: 0, peak: times.length };
  const sorted = [...times].sort((a, b) => a - b);
  const seconds = (sorted[sorted.length - 1] - sorted[0]) / 1000;
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return { seconds: +seconds.toFixed(2), average: seconds > 0 ? Math.round(sorted.length / seconds) : 0, peak };
}

// ------------------------------------------------------------------------------------------------ gateway benches: round trips

/** One kind of gateway request whose Postgres round trips are counted. */
export interface CountedRequest {
  name: string;
  path: string;
  /** The request body for a fresh reference. */
  body(reference: string): string;
  /** Its result is called back: the worker's round trips until the callback is delivered are counted too. */
  calledBack: boolean;
}

/**
 * Round trips to Postgres per request, counted at a proxy: a second API and one worker (the measured ones are
 * stopped) with no settle delay, `n` sequential requests of each kind so nothing else runs; the worker's idle
 * relay polling is measured first and subtracted. Redis commands per request (every process), and the SQL of
 * one request of each kind (and of its settlement and callback) traced.
 */
export async function countGatewayRoundTrips(bench: GatewayBench, requests: CountedRequest[], n = 200) {
  const { database, receiver, merchant } = bench;
  const apiProxy = await PgRoundTripCounter.for(database.url);
  const workerProxy = await PgRoundTripCounter.for(database.url);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // No settle delay: the API schedules the settlement, so it is the API that must not wait.
  const api = startRole('api', {
    env: { ...bench.env, DATABASE_URL: apiProxy.url(database.url), PORT: String(port), SANDBOX_SETTLE_DELAY_MS: '0' },
  });
  const worker = startRole('worker', {
    env: { ...bench.env, DATABASE_URL: workerProxy.url(database.url), SANDBOX_SETTLE_DELAY_MS: '0' },
  });
  const send = async (request: CountedRequest, reference: string) => {
    const res = await fetch(`${base}${request.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': merchant.token },
      body: request.body(reference),
    });
    if (res.status !== 200) throw new Error(`${request.path} → ${res.status} ${await res.text()}`);
  };
  const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await bench.redis!.info('stats'))?.[1] ?? 0);
  const out: Record<string, unknown> = { requests: n };
  try {
    await waitForLive(base, api);
    // Warm-up, then the worker's idle rate (relay polling).
    const warmer = requests.find((r) => r.calledBack) ?? requests[0];
    const warm = Array.from({ length: 20 }, (_, i) => `rt-warm-${process.pid}-${i}`);
    for (const ref of warm) await send(warmer, ref);
    if (warmer.calledBack) await receiver.waitFor(warm);
    await sleep(1000);
    workerProxy.roundTrips = 0;
    let t = performance.now();
    await sleep(3000);
    const idlePerSecond = workerProxy.roundTrips / ((performance.now() - t) / 1000);
    out.worker_idle_round_trips_per_second = +idlePerSecond.toFixed(1);

    for (const request of requests) {
      const refs = Array.from({ length: n }, (_, i) => `rt-${request.name}-${process.pid}-${i}`);
      const redis0 = await redisCommands();
      apiProxy.roundTrips = 0;
      workerProxy.roundTrips = 0;
      t = performance.now();
      for (const ref of refs) await send(request, ref);
      const counted: Record<string, unknown> = { api: +(apiProxy.roundTrips / n).toFixed(2) };
      if (request.calledBack) {
        await receiver.waitFor(refs);
        const seconds = (performance.now() - t) / 1000;
        counted.worker_until_called_back = +((workerProxy.roundTrips - idlePerSecond * seconds) / n).toFixed(2);
      }
      counted.redis_commands_all_processes = +(((await redisCommands()) - redis0) / n).toFixed(1);

      // One more, traced.
      await sleep(500);
      apiProxy.trace = [];
      workerProxy.trace = [];
      const traced = `rt-trace-${request.name}-${process.pid}`;
      await send(request, traced);
      counted.trace_api = apiProxy.trace;
      if (request.calledBack) {
        await receiver.waitFor([traced]);
        await sleep(300);
        counted.trace_worker = withoutRelayPolls(workerProxy.trace);
      }
      apiProxy.trace = null;
      workerProxy.trace = null;
      out[request.name] = counted;
    }
    return out;
  } finally {
    await stopChild(api);
    await stopChild(worker);
    await apiProxy.close();
    await workerProxy.close();
  }
}
