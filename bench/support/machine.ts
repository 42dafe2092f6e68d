/** What the machine and the database's backends spend: machine facts, CPU of processes, Postgres counters and waits. */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { Client } from 'pg';
import { SERVER_URL, sleep } from './environment';

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
