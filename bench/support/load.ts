import { loadavg } from 'node:os';
import { Client } from 'pg';
import { sleep } from './environment';
import { backendCpu, backendSecondsBetween, cpuTimes, sampleWaits, tableScans } from './machine';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon');

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
