/**
 * `npm run bench:callbacks`: callback deliveries alone, to a local keep-alive receiver (issue 10, item 5).
 *
 * 1. Creates and migrates a database of its own, starts a `node:http` receiver (keep-alive, answers 200 with a
 *    charge acknowledgement) and seeds a merchant with `cli.js seed --json --callback-url …` (signing secret, Basic
 *    auth for its collections endpoint, so every delivery is signed and carries credentials).
 * 2. Starts BENCH_WORKERS (2) `node dist/src/main.js worker` processes and warms them up with BENCH_WARMUP (1,000)
 *    deliveries.
 * 3. Schedules BENCH_CALLBACKS (20,000) due deliveries at once, in bulk SQL written as `CallbacksService.schedule`
 *    writes them (a successful_payment payload of a real charge's shape), and waits until the receiver has them all.
 * 4. Reports deliveries/s (insert to last arrival, and first to last arrival, and the busiest second), CPU per
 *    delivery by party (workers, the database's Postgres backends, redis-server, this process with the receiver),
 *    commits and WAL flushes per delivery, Redis commands per delivery (from Redis's own counters), and checks that
 *    every delivery ended DELIVERED with exactly one attempt recorded and that no callback arrived twice.
 *
 * Environment: DATABASE_URL (server), BENCH_REDIS_URL or REDIS_URL (a Redis on this machine; its CPU is read from
 * /proc by the pid it reports), BENCH_WORKERS, BENCH_CALLBACKS, BENCH_WARMUP, BENCH_DRAIN_TIMEOUT (seconds, 120),
 * BENCH_PROFILE=1 (the workers' CPU profiles, summarised by package), BENCH_RESULTS=file.json, BENCH_KEEP_DATABASE=1.
 */
import { ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { createBenchDatabase, dropBenchDatabase, newBenchDatabase } from './support/database';
import { CLI_JS, ensureBuilt, log, ROOT, SERVER_URL, sleep } from './support/environment';
import { backendCpu, backendSecondsBetween, cpuTimes, machineCpu, pgCounters } from './support/machine';
import { startRole, stopChild } from './support/processes';
import { summariseProfile } from './support/profiles';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const CALLBACKS = Number(process.env.BENCH_CALLBACKS ?? 20_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1_000);
const DRAIN_TIMEOUT_S = Number(process.env.BENCH_DRAIN_TIMEOUT ?? 120);
const PROFILE = Boolean(process.env.BENCH_PROFILE);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function main(): Promise<void> {
  ensureBuilt();
  const database = newBenchDatabase('paygate_bench_cb');
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  const receiver = await new Receiver().start();
  const workers: ChildProcess[] = [];
  const profileDirs: string[] = [];
  let db: Client | null = null;
  const report: Record<string, unknown> = { workers: WORKERS, callbacks: CALLBACKS };
  try {
    await createBenchDatabase(admin, database);
    db = new Client({ connectionString: database.url });
    await db.connect();
    const env = { DATABASE_URL: database.url, REDIS_URL, APP_ENV: 'sandbox' };
    const seeded = await cliJson(
      ['seed', '--json', '--callback-url', `${receiver.base}/cb`, '--callback-username', 'u', '--callback-password', 'p'],
      env,
    );
    const [{ id: clientId }] = (await db.query(`SELECT id FROM clients WHERE code = $1`, [seeded.client_code])).rows;

    for (let i = 0; i < WORKERS; i++) {
      const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), `paygate-bench-cb-worker${i + 1}-`)) : null;
      if (profileDir) profileDirs.push(profileDir);
      workers.push(startRole('worker', { env, profileDir }));
    }
    log(`started ${WORKERS} worker(s): pids ${workers.map((w) => w.pid).join(', ')}`);

    await schedule(db, clientId, `${receiver.base}/cb`, 'warm', WARMUP);
    await receiver.waitFor(WARMUP, DRAIN_TIMEOUT_S);
    log(`warm-up: ${WARMUP} deliveries received`);
    await sleep(1000); // let the warm-up's last attempts be recorded

    const before = await snapshot(db, database.name, workers, redisPid, redis);
    const t0 = performance.now();
    receiver.reset();
    await schedule(db, clientId, `${receiver.base}/cb`, 'cb', CALLBACKS);
    const drained = await receiver.waitFor(CALLBACKS, DRAIN_TIMEOUT_S);
    const seconds = (performance.now() - t0) / 1000;
    const after = await snapshot(db, database.name, workers, redisPid, redis);
    await sleep(1000);

    const [outcome] = (
      await db.query(
        `SELECT count(*) FILTER (WHERE d.status = 'DELIVERED')::int AS delivered, count(*)::int AS deliveries,
                (SELECT count(*)::int FROM callback_attempts a JOIN callback_deliveries x ON x.id = a.delivery_id WHERE x.reference LIKE 'cb-%') AS attempts
         FROM callback_deliveries d WHERE d.reference LIKE 'cb-%'`,
      )
    ).rows;
    const n = receiver.times.length;
    const perDelivery = (s: number) => +((s * 1000) / n).toFixed(3);
    const workerCpu = after.workers - before.workers;
    const postgresCpu = backendSecondsBetween(before.backends, after.backends);
    const redisCpu = after.redis - before.redis;
    const benchCpu = after.bench - before.bench;
    report.result = {
      drained,
      received: n,
      duplicates_at_receiver: receiver.duplicates,
      deliveries_per_second: Math.round(n / seconds),
      deliveries_per_second_first_to_last: rateOf(receiver.times).average,
      deliveries_per_second_peak_1s: rateOf(receiver.times).peak,
      seconds: +seconds.toFixed(2),
      machine_busy: +((after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total)).toFixed(2),
      cpu_ms_per_delivery: {
        workers: perDelivery(workerCpu),
        postgres: perDelivery(postgresCpu),
        redis: perDelivery(redisCpu),
        bench_and_receiver: perDelivery(benchCpu),
        total: perDelivery(workerCpu + postgresCpu + redisCpu + benchCpu),
      },
      commits_per_delivery: +((after.pg.commits - before.pg.commits) / n).toFixed(2),
      wal_flushes_per_delivery: +((after.pg.walFlushes - before.pg.walFlushes) / n).toFixed(2),
      redis_commands_per_delivery: +((after.redisCommands - before.redisCommands) / n).toFixed(2),
      database: outcome,
    };
    console.log(JSON.stringify(report.result, null, 2));
  } finally {
    for (const worker of workers) await stopChild(worker);
    for (const [i, dir] of profileDirs.entries()) report[`worker${i + 1}_profile`] = summariseProfile(dir, `worker${i + 1}_profile`);
    await db?.end().catch(() => undefined);
    await receiver.close();
    redis.disconnect();
    await dropBenchDatabase(admin, database.name);
    await admin.end();
  }
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

/** `count` due deliveries of one successful_payment callback each, as CallbacksService.schedule writes them. */
async function schedule(db: Client, clientId: string, url: string, prefix: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload)
     SELECT $1, 'collections', 'successful_payment', $3 || '-' || k, $2, $4::jsonb || jsonb_build_object(
       'external_reference', $3 || '-' || k, 'transaction_id', k::text, 'payment_id', k::text, 'charge_request_id', k::text)
     FROM generate_series(1, $5) k`,
    [clientId, url, prefix, JSON.stringify(SAMPLE_PAYLOAD), count],
  );
}

/** A charge callback as paymentResult() shapes it. */
const SAMPLE_PAYLOAD = {
  event: 'successful_payment',
  amount: '100.00',
  extra_data: null,
  client_code: 'BENCH',
  country_code: 'KEN',
  payer_msisdn: '254712345678',
  payment_date: '2026-11-22T08:56:00.000Z',
  service_code: 'BENCH-KES',
  currency_code: 'KES',
  account_number: 'ACC-1',
  payment_status: '700',
  payer_narration: 'bench',
  receiver_narration: 'bench',
  payment_method_code: 'MPESA',
  payer_transaction_id: 'SBX123456',
};

async function snapshot(db: Client, dbName: string, workers: ChildProcess[], redisPid: number, redis: Redis) {
  const usage = process.cpuUsage();
  const stats = await redis.info('stats');
  return {
    workers: workers.reduce((sum, w) => sum + cpuTimes(w.pid!), 0),
    backends: await backendCpu(db, dbName),
    redis: redisPid ? cpuTimes(redisPid) : 0,
    redisCommands: Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? 0),
    bench: (usage.user + usage.system) / 1e6,
    machine: machineCpu(),
    pg: await pgCounters(db, dbName),
  };
}

/** Average rate between the first and last timestamp (ms, performance.now()), and the busiest 1-s window. */
function rateOf(times: number[]) {
  if (times.length < 2) return { average: 0, peak: times.length };
  const seconds = (times[times.length - 1] - times[0]) / 1000;
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return { average: seconds > 0 ? Math.round(times.length / seconds) : 0, peak };
}

/** The merchant's endpoint: keep-alive, answers 200 with a charge acknowledgement, counts deliveries by event id. */
class Receiver {
  times: number[] = [];
  duplicates = 0;
  base = '';
  private seen = new Set<string>();
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-event-id']);
        if (this.seen.has(id)) this.duplicates++;
        this.seen.add(id);
        this.times.push(performance.now());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"acknowledgement_code":"900"}');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  reset(): void {
    this.times = [];
  }

  async waitFor(count: number, timeoutS: number): Promise<boolean> {
    const deadline = performance.now() + timeoutS * 1000;
    let lastLog = performance.now();
    while (this.times.length < count && performance.now() < deadline) {
      await sleep(50);
      if (performance.now() - lastLog > 2000) {
        lastLog = performance.now();
        log(`${this.times.length}/${count} received`);
      }
    }
    return this.times.length >= count;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function cliJson(args: string[], env: Record<string, string>): Promise<Record<string, string>> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [CLI_JS, ...args], { cwd: ROOT, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      error ? reject(new Error(`cli ${args[0]}: ${stderr.trim() || error.message}`)) : resolve(JSON.parse(stdout)),
    ),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
