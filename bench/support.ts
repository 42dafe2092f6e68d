/**
 * What the benchmarks (`npm run bench:ledger`, `npm run bench:collections`) share: a database of their own
 * (created, migrated, dropped), `node dist/src/main.js <role>` children, autocannon runs with the CPU used by the
 * API process, the database's Postgres backends and the load generator, wait-event sampling, machine facts, and
 * the summary of a V8 CPU profile. Not part of `npm test`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, Socket } from 'node:net';
import { Client } from 'pg';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon');

export const ROOT = join(__dirname, '..');
export const MAIN_JS = join(ROOT, 'dist', 'src', 'main.js');
export const CLI_JS = join(ROOT, 'dist', 'src', 'admin', 'cli.js');
/** The Postgres server the benchmarks create their database on. */
export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const log = (line: string) => console.log(`[bench] ${line}`);

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

/** Creates the database on the server of `admin` and migrates it with the compiled migrations (dist/ is built first when stale). */
export async function createBenchDatabase(admin: Client, database: BenchDatabase): Promise<void> {
  log(`creating database ${database.name}`);
  await admin.query(`CREATE DATABASE ${database.name}`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require(join(ROOT, 'scripts', 'migrate.js')); // builds dist/ first when sources are newer
  await migrate(database.url);
}

/** Drops the database (closing whatever is still connected), unless BENCH_KEEP_DATABASE is set. */
export async function dropBenchDatabase(admin: Client, name: string): Promise<void> {
  if (process.env.BENCH_KEEP_DATABASE) return;
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e) => log(`could not drop ${name}: ${e.message}`));
  log(`dropped database ${name}`);
}

export async function count(db: Client, table: string): Promise<number> {
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows;
  return n;
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
    env: { ...process.env, LOG_LEVEL: 'warn', APP_ENV: process.env.APP_ENV ?? 'sandbox', ...options.env },
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
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('max_connections','shared_buffers','synchronous_commit','fsync','work_mem')`,
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
  })();
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
