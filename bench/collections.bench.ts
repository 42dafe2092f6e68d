/**
 * Collection gateway benchmark (`npm run bench:collections`). Not part of `npm test`.
 *
 * 1. Starts a redis-server of its own (free port, nothing on disk) so no other process's workers take its jobs,
 *    creates and migrates a database of its own on the Postgres server of DATABASE_URL, starts a local HTTP
 *    receiver (node:http, answers 200 and timestamps every callback by its external_reference), and seeds a
 *    merchant with `node dist/src/admin/cli.js seed --json --callback-url …` (API key, KES service with a FIXED
 *    fee of 10 and bounds 1–1,000,000, funded settlement wallet).
 * 2. Starts the API (`node dist/src/main.js api`) and gets a gateway token (POST /v1/auth), then measures:
 *    (a) charges accepted/s: autocannon POST /v1/mobile-money/charge, a fresh external_reference per request
 *        (idReplacement), payer 254712345678 (the sandbox settles it successfully), amount 100;
 *    (d) checkout initiations/s: autocannon POST /v2/checkout/initiate, a fresh merchant_transaction_id each;
 *        (a) and (d) run before any worker is started, so the API process and Postgres have the machine;
 *    (c) callback deliveries/s: starts BENCH_WORKERS `node dist/src/main.js worker` processes, which settle the
 *        charges (a) accepted and deliver their callbacks; the receiver counts deliveries over time until the
 *        backlog has drained; then BENCH_DELIVERY_BACKLOG (10,000) callbacks are scheduled at once in bulk SQL (as
 *        CallbacksService.schedule writes them) and drained, deliveries alone;
 *    (b) end-to-end latency: charges at a steady rate (an open-loop generator, one request every 1/rate s) for
 *        BENCH_E2E_SECONDS, each timed from request sent to callback received. Starts at BENCH_E2E_RATE (1,000/s),
 *        or at 80 % of what (c) drained when that is lower (and then tries one step higher); steps down while a
 *        rate is not sustained (sustained: all accepted and called back, and the median latency of the last third
 *        within 250 ms of the first third); then 5 s at a light load (BENCH_E2E_FLOOR_RATE), where no queue forms;
 *    (e) payment statement: inserts BENCH_STATEMENT_ROWS (100,000) pending payments (703, no ledger entry) in bulk
 *        SQL in a window of their own and pages through POST /v1/statement with limit 1000.
 *    For each phase: the CPU used by the API, the workers, the database's Postgres backends, redis-server and this
 *    process, the whole machine's CPU, backend wait states sampled every 100 ms, commits and WAL flushes
 *    (pg_stat_wal, server-wide; Postgres statistics lag by up to 1 s) and Redis commands per request. The SELECT 1
 *    round-trip cost over TCP and the Unix socket is printed with the machine facts.
 * 3. Counts Postgres round trips per request: a second API and one worker connect through a counting proxy
 *    (Query and Sync messages of the wire protocol) for 200 sequential requests each, and the SQL of one charge,
 *    one checkout and one settlement with its callback is traced.
 * 4. Runs `node dist/src/admin/cli.js ledger:verify --json`, prints it, drops the database, stops its children.
 *
 * Environment: DATABASE_URL (server), SANDBOX_SETTLE_DELAY_MS (default 2000), BENCH_WORKERS (default 2),
 * BENCH_DURATION (seconds of (a) and (d), default 15), BENCH_CONNECTIONS (default 32), BENCH_E2E_RATE (default
 * 1000), BENCH_E2E_SECONDS (default 15), BENCH_STATEMENT_ROWS (default 100000), BENCH_DRAIN_TIMEOUT (seconds,
 * default 150), BENCH_DELIVERY_BACKLOG (default 10000), BENCH_E2E_FLOOR_RATE (light-load rate of (b), default 20),
 * BENCH_REDIS_URL (use this Redis instead of starting one), BENCH_PROFILE=1 (CPU profiles of the API and the
 * workers, summarised by package), BENCH_RESULTS=file.json, BENCH_KEEP_DATABASE=1.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request as httpRequest, Server } from 'node:http';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import {
  backendCpu,
  backendSecondsBetween,
  CLI_JS,
  cpuTimes,
  createBenchDatabase,
  driveLoad,
  dropBenchDatabase,
  ensureBuilt,
  freePort,
  loadLine,
  log,
  machineCpu,
  machineFacts,
  newBenchDatabase,
  percentiles,
  pgCounters,
  pgRoundTripCost,
  PgRoundTripCounter,
  ROOT,
  SERVER_URL,
  sampleWaits,
  sleep,
  startRole,
  stopChild,
  summariseProfile,
  waitForLive,
  withoutRelayPolls,
} from './support';

const SETTLE_DELAY_MS = Number(process.env.SANDBOX_SETTLE_DELAY_MS ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const E2E_RATE = Number(process.env.BENCH_E2E_RATE ?? 1000);
const E2E_SECONDS = Number(process.env.BENCH_E2E_SECONDS ?? 15);
const E2E_FLOOR_RATE = Number(process.env.BENCH_E2E_FLOOR_RATE ?? 20);
const STATEMENT_ROWS = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000);
const DRAIN_TIMEOUT_S = Number(process.env.BENCH_DRAIN_TIMEOUT ?? 150);
const DELIVERY_BACKLOG = Number(process.env.BENCH_DELIVERY_BACKLOG ?? 10_000);
const PROFILE = Boolean(process.env.BENCH_PROFILE);
const PAYER = '254712345678';
const AMOUNT = '100';

const TARGETS = {
  charges_per_second: 1500,
  charges_p99_ms: 50,
  e2e_rate: 1000,
  e2e_p99_ms: SETTLE_DELAY_MS + 300,
  deliveries_per_second: 3000,
  checkouts_per_second: 1500,
  checkouts_p99_ms: 50,
};

interface Merchant {
  clientId: string;
  clientCode: string;
  serviceCode: string;
  serviceId: string;
  consumerKey: string;
  consumerSecret: string;
  token: string;
}

interface Processes {
  api: ChildProcess;
  workers: ChildProcess[];
  redisPid: number | null;
}

async function main(): Promise<void> {
  const started = Date.now();
  ensureBuilt();
  const database = newBenchDatabase('paygate_bench_coll');
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  const report: Record<string, unknown> = {};
  const children: ChildProcess[] = [];
  let redis: OwnRedis | null = null;
  let receiver: Receiver | null = null;
  let db: Client | null = null;
  let redisClient: Redis | null = null;
  const profileDirs: Array<{ label: string; dir: string }> = [];
  try {
    redis = process.env.BENCH_REDIS_URL ? null : await startOwnRedis();
    const redisUrl = process.env.BENCH_REDIS_URL ?? redis!.url;
    redisClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    const redisVersion = /redis_version:(\S+)/.exec(await redisClient.info('server'))?.[1];
    report.machine = await machineFacts(admin, {
      redis: `${redisVersion} (${redis ? `own redis-server, pid ${redis.pid}` : 'BENCH_REDIS_URL'})`,
      workers: WORKERS,
      sandbox_settle_delay_ms: SETTLE_DELAY_MS,
      postgres_round_trip: await pgRoundTripCost(),
    });
    console.log(JSON.stringify({ machine: report.machine }, null, 2));

    await createBenchDatabase(admin, database);
    db = new Client({ connectionString: database.url });
    await db.connect();

    receiver = await new Receiver().start();
    log(`callback receiver on ${receiver.base}`);
    const t0 = Date.now();
    const seeded = await cliJson(
      ['seed', '--json', '--callback-url', `${receiver.base}/cb`, '--callback-username', 'u', '--callback-password', 'p'],
      {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        APP_ENV: 'sandbox',
      },
    );
    log(`seeded merchant ${seeded.client_code} (service ${seeded.service_code}) in ${Date.now() - t0} ms`);

    const childEnv = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS),
    };
    const profileDir = (label: string) => {
      if (!PROFILE) return null;
      const dir = mkdtempSync(join(tmpdir(), `paygate-bench-prof-${label}-`));
      profileDirs.push({ label, dir });
      return dir;
    };
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const api = startRole('api', { env: { ...childEnv, PORT: String(port) }, profileDir: profileDir('api') });
    children.push(api);
    await waitForLive(base, api);
    log(`API child pid ${api.pid} listening on ${base}`);
    const procs: Processes = { api, workers: [], redisPid: redis?.pid ?? null };

    const auth = await postJson(base, '/v1/auth', { consumer_key: seeded.consumer_key, consumer_secret: seeded.consumer_secret });
    const [row] = (
      await db.query(
        `SELECT c.id AS client_id, s.id AS service_id FROM clients c JOIN client_services s ON s.client_id = c.id WHERE c.code = $1 AND s.code = $2`,
        [seeded.client_code, seeded.service_code],
      )
    ).rows;
    const merchant: Merchant = {
      clientId: row.client_id,
      clientCode: seeded.client_code,
      serviceCode: seeded.service_code,
      serviceId: row.service_id,
      consumerKey: seeded.consumer_key,
      consumerSecret: seeded.consumer_secret,
      token: auth.access_token,
    };
    const meter = new Meter(db, database.name, procs, redisClient);

    // Warm-up (JIT, pools): 3 s of charges, not reported; they are settled with (a)'s in (c).
    await driveCharges(base, merchant, receiver, db, database.name, api.pid!, 'warm-up', 3);

    // (a) charges accepted/s, API only.
    report.a_charges = await measured(meter, 'charge', () =>
      driveCharges(base, merchant, receiver!, db!, database.name, api.pid!, 'a_charges', DURATION),
    );
    console.log(JSON.stringify(report.a_charges));

    // (d) checkout initiations/s, API only.
    report.d_checkouts = await measured(meter, 'checkout', () => driveCheckouts(base, merchant, receiver!, db!, database.name, api.pid!));
    console.log(JSON.stringify(report.d_checkouts));

    // (c) workers start and drain the backlog of settlements and callbacks.
    for (let i = 0; i < WORKERS; i++) {
      const worker = startRole('worker', { env: childEnv, profileDir: profileDir(`worker${i + 1}`) });
      children.push(worker);
      procs.workers.push(worker);
    }
    log(`started ${WORKERS} worker(s): pids ${procs.workers.map((w) => w.pid).join(', ')}`);
    report.c_callbacks = await drainCharges(meter, receiver, redisClient);
    console.log(JSON.stringify(report.c_callbacks));
    report.c_deliveries = await drainDeliveries(meter, receiver, redisClient, merchant);
    console.log(JSON.stringify(report.c_deliveries));

    // (b) end-to-end latency at a steady rate.
    report.b_end_to_end = await endToEnd(meter, base, merchant, receiver, report.c_callbacks as Record<string, any>);

    // (e) payment statement.
    report.e_statement = await statement(meter, base, merchant, db);
    console.log(JSON.stringify(report.e_statement));

    // Stop the measured processes; round trips are counted with a second API and one worker behind a proxy.
    for (const child of children.splice(0)) await stopChild(child);
    report.round_trips = await countRoundTrips(database, childEnv, merchant, receiver, redisClient);
    console.log(JSON.stringify({ round_trips: report.round_trips }, null, 2));

    report.ledger_verify = await ledgerVerify(database.url, redisUrl);
    console.log(JSON.stringify({ ledger_verify: report.ledger_verify }, null, 2));
  } finally {
    for (const child of children) await stopChild(child);
    for (const { label, dir } of profileDirs) report[`${label}_profile`] = summariseProfile(dir, `${label}_profile`);
    redisClient?.disconnect();
    await db?.end().catch(() => undefined);
    await receiver?.close();
    await dropBenchDatabase(admin, database.name);
    await admin.end();
    await redis?.stop();
  }
  report.total_seconds = (Date.now() - started) / 1000;
  printSummary(report);
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

// ------------------------------------------------------------------------------------------------ (a) and (d)

function chargeBody(m: Merchant, receiver: Receiver, reference: string): string {
  return JSON.stringify({
    external_reference: reference,
    client_code: m.clientCode,
    origin_channel_code: 'API',
    originator_msisdn: PAYER,
    payer_msisdn: PAYER,
    payer_name: 'Bench Payer',
    payer_email: 'payer@example.com',
    service_code: m.serviceCode,
    account_number: 'INV-BENCH',
    invoice_number: '',
    currency_code: 'KES',
    country_code: 'KEN',
    amount: AMOUNT,
    add_transaction_charge: false,
    transaction_charge: '0',
    payment_method_code: 'MMONEY_KEN',
    extra_data: { bench: true },
    description: 'Bench charge',
    notify_client: false,
    notify_originator: false,
    callback_url: `${receiver.base}/cb`,
  });
}

function driveCharges(
  base: string,
  m: Merchant,
  receiver: Receiver,
  db: Client,
  dbName: string,
  apiPid: number,
  name: string,
  duration: number,
) {
  return driveLoad({
    name,
    base,
    serverPid: apiPid,
    db,
    dbName,
    connections: CONNECTIONS,
    duration,
    idReplacement: true,
    requests: [
      {
        method: 'POST',
        path: '/v1/mobile-money/charge',
        headers: { 'content-type': 'application/json', 'x-access-token': m.token },
        body: chargeBody(m, receiver, `${name.slice(0, 1)}-[<id>]`),
      },
    ],
  });
}

function driveCheckouts(base: string, m: Merchant, receiver: Receiver, db: Client, dbName: string, apiPid: number) {
  return driveLoad({
    name: 'd_checkouts',
    base,
    serverPid: apiPid,
    db,
    dbName,
    connections: CONNECTIONS,
    duration: DURATION,
    idReplacement: true,
    requests: [
      {
        method: 'POST',
        path: '/v2/checkout/initiate',
        headers: { 'content-type': 'application/json', 'x-access-token': m.token },
        body: JSON.stringify({
          merchant_transaction_id: 'd-[<id>]',
          amount: 1500,
          payer_name: 'Bench Payer',
          payer_email: 'payer@example.com',
          payer_msisdn: PAYER,
          service_code: m.serviceCode,
          account_number: 'ACC-BENCH',
          expires_in: 60,
          narration: 'Bench checkout',
          callback_url: `${receiver.base}/checkout`,
          redirect_url: `${receiver.base}/thanks`,
        }),
      },
    ],
  });
}

/** Runs a driveLoad() phase inside a Meter window and adds the per-request costs it saw. */
async function measured(meter: Meter, unit: string, run: () => Promise<Record<string, unknown>>) {
  const before = await meter.snapshot();
  const result = await run();
  const after = await meter.snapshot();
  const ok = Number((result.status_codes as Record<string, number>)['200'] ?? 0);
  return { ...result, per_request: meter.costs(before, after, ok, unit) };
}

// ------------------------------------------------------------------------------------------------ (c)

/**
 * Waits until `expected` more callbacks have reached the receiver, sampling every 2 s how far settlement
 * (payments leaving 703), the outbox relay and delivery have come, and where the backlog sits.
 */
async function watchDrain(meter: Meter, receiver: Receiver, redis: Redis, name: string, expected: number, unit: string) {
  const deliveredBefore = receiver.count;
  log(`${name}: waiting for ${expected} callbacks`);
  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const t0 = performance.now();
  const timeline: Array<Record<string, number>> = [];
  let lastPrint = 0;
  while ((performance.now() - t0) / 1000 < DRAIN_TIMEOUT_S) {
    const delivered = receiver.count - deliveredBefore;
    if (performance.now() - lastPrint >= 2000 || delivered >= expected) {
      lastPrint = performance.now();
      const [s] = (
        await meter.db.query(
          `SELECT (SELECT count(*) FROM payments WHERE payment_status <> 703)::int AS settled,
                  (SELECT count(*) FROM outbox WHERE relayed_at IS NULL AND available_at <= now())::int AS outbox_due,
                  (SELECT count(*) FROM callback_deliveries WHERE status = 'PENDING')::int AS deliveries_pending`,
        )
      ).rows;
      const q = await queueDepths(redis);
      const point = { t: +((performance.now() - t0) / 1000).toFixed(1), delivered, ...s, ...q };
      timeline.push(point);
      log(`${name} ${JSON.stringify(point)}`);
    }
    if (delivered >= expected) break;
    await sleep(250);
  }
  const waitSummary = await waits.stop();
  const after = await meter.snapshot();
  const times = receiver.times.slice(deliveredBefore);
  const rates = rateOf(times);
  return {
    times,
    result: {
      scenario: name,
      expected,
      delivered: times.length,
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

/** (c) The charges accepted so far are settled and called back by the workers just started. */
async function drainCharges(meter: Meter, receiver: Receiver, redis: Redis) {
  const [{ n: charges }] = (await meter.db.query(`SELECT count(*)::int AS n FROM payments WHERE checkout_session_id IS NULL`)).rows;
  const { times, result } = await watchDrain(
    meter,
    receiver,
    redis,
    'c_charge_backlog',
    charges - receiver.uniqueCharges,
    'charge settled and called back',
  );
  // Settlement times from the database: how fast the payments queue moved, and the delivery-only tail after it.
  const [st] = (
    await meter.db.query(
      `SELECT count(*)::int AS n, extract(epoch FROM max(settled_at) - min(settled_at)) AS seconds,
              extract(epoch FROM max(settled_at)) * 1000 AS last_ms
       FROM payments WHERE settled_at IS NOT NULL AND checkout_session_id IS NULL`,
    )
  ).rows;
  const tail = times.filter((t) => receiver.wallOf(t) > Number(st.last_ms));
  return {
    ...result,
    settled_per_second: st.seconds > 0 ? Math.round(st.n / Number(st.seconds)) : null,
    delivery_only_tail: { deliveries: tail.length, per_second: rateOf(tail).average },
  };
}

/**
 * (c) Deliveries alone: BENCH_DELIVERY_BACKLOG callbacks scheduled at once, written as CallbacksService.schedule
 * writes them (a due delivery row with the frozen payload of a real charge callback), in bulk SQL while the
 * workers run.
 */
async function drainDeliveries(meter: Meter, receiver: Receiver, redis: Redis, m: Merchant) {
  const [sample] = (await meter.db.query(`SELECT payload FROM callback_deliveries WHERE event = 'successful_payment' LIMIT 1`)).rows;
  const watching = watchDrain(meter, receiver, redis, 'c_delivery_backlog', DELIVERY_BACKLOG, 'callback delivered');
  await meter.db.query(
    `INSERT INTO callback_deliveries (client_id, event, reference, url, payload)
     SELECT $1, 'successful_payment', 'cd-' || k, $2, $3::jsonb || jsonb_build_object('external_reference', 'cd-' || k)
     FROM generate_series(1, $4) k`,
    [m.clientId, `${receiver.base}/cb`, sample.payload, DELIVERY_BACKLOG],
  );
  return (await watching).result;
}

async function queueDepths(redis: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const q of ['payments']) {
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
function rateOf(times: number[]) {
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

// ------------------------------------------------------------------------------------------------ (b)

async function endToEnd(meter: Meter, base: string, m: Merchant, receiver: Receiver, drained: Record<string, any>) {
  const drainRate = Number(drained.deliveries_per_second) || 0;
  const step = (r: number) => Math.max(10, r < 500 ? Math.floor(r / 10) * 10 : Math.floor(r / 50) * 50);
  let rate = E2E_RATE;
  let why = 'the target rate';
  let canGoUp = false;
  if (drainRate > 0 && drainRate < rate) {
    rate = step(drainRate * 0.8);
    canGoUp = true;
    why = `(c) drained only ${drainRate} charges/s with the API idle, so ${E2E_RATE}/s cannot be sustained; starting at 80 % of that`;
  }
  log(`b_end_to_end: starting at ${rate}/s: ${why}`);
  const attempts: Array<Record<string, any>> = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const result = await pacedCharges(meter, base, m, receiver, rate, E2E_SECONDS, `b${attempt}`);
    attempts.push(result);
    console.log(JSON.stringify(result));
    const anyFailed = attempts.some((a) => !a.sustained);
    const anySustained = attempts.some((a) => a.sustained);
    const next =
      result.sustained && canGoUp && !anyFailed
        ? step(Math.min(E2E_RATE, rate * 1.25)) // try higher
        : !result.sustained && !anySustained
          ? step(rate * 0.8) // try lower
          : rate;
    if (next === rate) break;
    rate = next;
  }
  const sustained = attempts.filter((a) => a.sustained).sort((a, b) => b.target_rate - a.target_rate);
  const best = sustained[0] ?? attempts[attempts.length - 1];
  // The floor: the same path at a light load, where no queue forms; what the pipeline adds to the settle delay.
  const floor = await pacedCharges(meter, base, m, receiver, E2E_FLOOR_RATE, 5, 'bfloor');
  console.log(JSON.stringify(floor));
  return { start_reason: why, attempts, reported: best, light_load: floor };
}

/**
 * An open-loop generator: the i-th charge is sent at i/rate seconds whatever the answers, so a slow server
 * cannot slow the arrivals down (no coordinated omission). Each charge is timed from send to callback.
 */
async function pacedCharges(meter: Meter, base: string, m: Merchant, receiver: Receiver, rate: number, seconds: number, label: string) {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const total = Math.round(rate * seconds);
  const prefix = `${label}-${process.pid}`;
  const sentAt: number[] = new Array(total);
  const responseMs: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const start = performance.now();
  await new Promise<void>((resolve) => {
    let sent = 0;
    let finished = 0;
    const fire = (i: number) => {
      const body = chargeBody(m, receiver, `${prefix}-${i}`);
      const t = performance.now();
      sentAt[i] = t;
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: '/v1/mobile-money/charge',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-access-token': m.token },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            responseMs.push(performance.now() - t);
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
      req.end(body);
    };
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) fire(sent++);
      if (sent >= total) clearInterval(timer);
    }, 1);
  });
  const sendSeconds = (performance.now() - start) / 1000;
  // Callbacks: wait until all accepted charges have called back (or the backlog is clearly not draining).
  const accepted = statuses['200'] ?? 0;
  const deadline = performance.now() + Math.max(30_000, SETTLE_DELAY_MS + 20_000);
  let seen = 0;
  while (performance.now() < deadline) {
    seen = 0;
    for (let i = 0; i < total; i++) if (receiver.arrivals.has(`${prefix}-${i}`)) seen++;
    if (seen >= accepted) break;
    await sleep(250);
  }
  const drainSeconds = (performance.now() - start) / 1000;
  const waitSummary = await waits.stop();
  const after = await meter.snapshot();
  agent.destroy();
  const e2e: number[] = [];
  const bySlice: number[][] = [[], [], []];
  const sliceLength = seconds / 3;
  for (let i = 0; i < total; i++) {
    const got = receiver.arrivals.get(`${prefix}-${i}`);
    if (got === undefined) continue;
    const ms = got - sentAt[i];
    e2e.push(ms);
    bySlice[Math.min(2, Math.floor((sentAt[i] - start) / 1000 / sliceLength))].push(ms);
  }
  const slices = bySlice.map((s) => percentiles(s, [50, 99]));
  const sustained =
    errors === 0 && accepted >= total * 0.99 && seen >= accepted && sendSeconds <= seconds * 1.05 && slices[2].p50 - slices[0].p50 < 250;
  return {
    scenario: `b_end_to_end_${rate}_per_s`,
    target_rate: rate,
    seconds,
    sent: total,
    send_seconds: +sendSeconds.toFixed(2),
    accepted,
    status_codes: statuses,
    errors,
    callbacks_received: seen,
    sustained,
    charge_response_ms: percentiles(responseMs),
    end_to_end_ms: percentiles(e2e),
    end_to_end_ms_by_third: slices,
    seconds_until_last_callback: +drainSeconds.toFixed(1),
    per_charge: meter.costs(before, after, seen, 'charge accepted, settled and called back'),
    db_backends_by_wait: waitSummary,
  };
}

// ------------------------------------------------------------------------------------------------ (e)

async function statement(meter: Meter, base: string, m: Merchant, db: Client) {
  const from = new Date(Date.now() - 2 * 86_400_000);
  const to = new Date(from.getTime() + STATEMENT_ROWS + 1000);
  const t0 = Date.now();
  await db.query(
    `INSERT INTO payments (client_id, client_service_id, external_reference, request_fingerprint, origin_channel_code,
       originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number, currency, country_code,
       service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge, payment_method_code,
       extra_data, description, notify_client, notify_originator, callback_url, payment_status, created_at, updated_at)
     SELECT $1, $2, 'stmt-' || k, 'bench', 'API', $3, $3, 'Bench Payer', 'payer@example.com', 'INV-' || k, '', 'KES', 'KEN',
            100, 0, 100, 10, false, 'MMONEY_KEN', '{"bench": true}'::jsonb, 'Bench statement row ' || k, false, false,
            'https://merchant.invalid/cb', 703, $4::timestamptz + k * interval '1 millisecond', $4::timestamptz + k * interval '1 millisecond'
     FROM generate_series(1, $5) k`,
    [m.clientId, m.serviceId, PAYER, from, STATEMENT_ROWS],
  );
  await db.query('ANALYZE payments');
  const insertSeconds = (Date.now() - t0) / 1000;
  log(`inserted ${STATEMENT_ROWS} payments in ${insertSeconds.toFixed(1)} s`);
  const before = await meter.snapshot();
  const pages: number[] = [];
  const fullPages: number[] = [];
  let rows = 0;
  let bytes = 0;
  const start = performance.now();
  for (let offset = 0; ; offset += 1000) {
    const p0 = performance.now();
    const res = await fetch(`${base}/v1/statement`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': m.token },
      body: JSON.stringify({ start_date: from.toISOString(), end_date: to.toISOString(), offset, limit: 1000 }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`statement offset ${offset} → ${res.status} ${text.slice(0, 200)}`);
    const page = JSON.parse(text) as unknown[];
    pages.push(performance.now() - p0);
    if (page.length === 1000) fullPages.push(performance.now() - p0);
    rows += page.length;
    bytes += text.length;
    if (page.length < 1000) break;
  }
  const seconds = (performance.now() - start) / 1000;
  const after = await meter.snapshot();
  return {
    scenario: 'e_statement',
    rows,
    expected_rows: STATEMENT_ROWS,
    insert_seconds: insertSeconds,
    pages: pages.length,
    seconds: +seconds.toFixed(2),
    rows_per_second: Math.round(rows / seconds),
    bytes,
    // Full pages only: first (offset 0), middle, last (the largest offset).
    page_ms: {
      first: Math.round(fullPages[0]),
      middle: Math.round(fullPages[Math.floor(fullPages.length / 2)]),
      last: Math.round(fullPages[fullPages.length - 1]),
      ...percentiles(fullPages),
    },
    per_page: meter.costs(before, after, pages.length, 'page of 1000 rows'),
  };
}

// ------------------------------------------------------------------------------------------------ resources

interface Snapshot {
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
class Meter {
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
      api: safe(this.procs.api.pid),
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

// ------------------------------------------------------------------------------------------------ round trips

/**
 * Round trips to Postgres per request, counted at a proxy: a second API and one worker (the measured ones are
 * stopped), sequential requests so nothing else runs; the worker's idle relay polling is measured first and
 * subtracted. The SQL of one charge, one checkout and one settlement + callback is traced.
 */
async function countRoundTrips(database: { url: string }, env: Record<string, string>, m: Merchant, receiver: Receiver, redis: Redis) {
  const apiProxy = await PgRoundTripCounter.for(database.url);
  const workerProxy = await PgRoundTripCounter.for(database.url);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // No settlement delay here: the API schedules the settlement, so it is the API that must not wait.
  const api = startRole('api', {
    env: { ...env, DATABASE_URL: apiProxy.url(database.url), PORT: String(port), SANDBOX_SETTLE_DELAY_MS: '0' },
  });
  const worker = startRole('worker', { env: { ...env, DATABASE_URL: workerProxy.url(database.url), SANDBOX_SETTLE_DELAY_MS: '0' } });
  const N = 200;
  const checkoutBody = (id: string) =>
    JSON.stringify({
      merchant_transaction_id: id,
      amount: 1500,
      payer_name: 'Bench Payer',
      payer_email: 'payer@example.com',
      payer_msisdn: PAYER,
      service_code: m.serviceCode,
      account_number: 'ACC-BENCH',
      expires_in: 60,
      narration: 'Bench checkout',
      callback_url: `${receiver.base}/checkout`,
      redirect_url: `${receiver.base}/thanks`,
    });
  const post = async (path: string, body: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': m.token },
      body,
    });
    if (res.status !== 200) throw new Error(`${path} → ${res.status} ${await res.text()}`);
  };
  const charge = (ref: string) => post('/v1/mobile-money/charge', chargeBody(m, receiver, ref));
  const waitCallbacks = async (refs: string[]) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !refs.every((r) => receiver.arrivals.has(r))) await sleep(20);
  };
  try {
    await waitForLive(base, api);
    // Warm-up, then the worker's idle rate (relay polling).
    const warm = Array.from({ length: 20 }, (_, i) => `rt-warm-${process.pid}-${i}`);
    for (const ref of warm) await charge(ref);
    await waitCallbacks(warm);
    await sleep(1000);
    workerProxy.roundTrips = 0;
    let t = performance.now();
    await sleep(3000);
    const idlePerSecond = workerProxy.roundTrips / ((performance.now() - t) / 1000);

    const refs = Array.from({ length: N }, (_, i) => `rt-${process.pid}-${i}`);
    const redis0 = Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);
    apiProxy.roundTrips = 0;
    workerProxy.roundTrips = 0;
    t = performance.now();
    for (const ref of refs) await charge(ref);
    const apiCharge = apiProxy.roundTrips / N;
    await waitCallbacks(refs);
    const workerSeconds = (performance.now() - t) / 1000;
    const workerPerCharge = (workerProxy.roundTrips - idlePerSecond * workerSeconds) / N;
    const redisPerCharge = (Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0) - redis0) / N;

    apiProxy.roundTrips = 0;
    for (let i = 0; i < N; i++) await post('/v2/checkout/initiate', checkoutBody(`rt-${process.pid}-${i}`));
    const apiCheckout = apiProxy.roundTrips / N;

    // One of each, traced.
    await sleep(500);
    apiProxy.trace = [];
    workerProxy.trace = [];
    const traced = `rt-trace-${process.pid}`;
    await charge(traced);
    const chargeTrace = apiProxy.trace;
    await waitCallbacks([traced]);
    await sleep(300);
    const workerTrace = withoutRelayPolls(workerProxy.trace);
    apiProxy.trace = [];
    await post('/v2/checkout/initiate', checkoutBody(traced));
    const checkoutTrace = apiProxy.trace;
    apiProxy.trace = null;
    workerProxy.trace = null;
    return {
      charge_accept_api: +apiCharge.toFixed(2),
      charge_settle_and_callback_worker: +workerPerCharge.toFixed(2),
      worker_idle_round_trips_per_second: +idlePerSecond.toFixed(1),
      checkout_initiate_api: +apiCheckout.toFixed(2),
      redis_commands_per_charge_all_processes: +redisPerCharge.toFixed(1),
      requests: N,
      trace_charge_api: chargeTrace,
      trace_checkout_api: checkoutTrace,
      trace_settle_and_callback_worker: workerTrace,
    };
  } finally {
    await stopChild(api);
    await stopChild(worker);
    await apiProxy.close();
    await workerProxy.close();
  }
}

// ------------------------------------------------------------------------------------------------ receiver, Redis, CLI

/** The merchant's callback endpoint: answers 200 and notes when each reference's callback arrived. */
class Receiver {
  /** performance.now() of the first callback per reference. */
  readonly arrivals = new Map<string, number>();
  /** performance.now() of every callback, in arrival order. */
  readonly times: number[] = [];
  duplicates = 0;
  uniqueCharges = 0;
  base = '';
  private server!: Server;
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
          reference = String(body.external_reference ?? body.merchant_transaction_id ?? '');
        } catch {
          // not JSON: counted, not matched
        }
        this.times.push(at);
        if (this.arrivals.has(reference)) this.duplicates++;
        else {
          this.arrivals.set(reference, at);
          this.uniqueCharges++;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"acknowledgement_code":"900"}');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
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

async function cliJson(args: string[], env: Record<string, string>): Promise<Record<string, string>> {
  const { code, stdout, stderr } = await cli(args, env);
  if (code !== 0) throw new Error(`cli ${args[0]} exited ${code}: ${stderr.trim()}`);
  return JSON.parse(stdout);
}

async function ledgerVerify(databaseUrl: string, redisUrl: string) {
  const t0 = Date.now();
  const { code, stdout, stderr } = await cli(['ledger:verify', '--json'], {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    APP_ENV: 'sandbox',
  });
  const output = stdout.trim() ? JSON.parse(stdout) : null;
  return { exit_code: code, seconds: (Date.now() - t0) / 1000, ...(output ?? {}), ...(stderr.trim() ? { stderr: stderr.trim() } : {}) };
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

// ------------------------------------------------------------------------------------------------ summary

function printSummary(report: Record<string, any>): void {
  console.log('\n================ summary ================');
  const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const a = report.a_charges;
  if (a) {
    console.log(loadLine(a));
    console.log(
      `  (a) target ≥ ${TARGETS.charges_per_second}/s, p99 ≤ ${TARGETS.charges_p99_ms} ms: ${mark(a.ok_per_second >= TARGETS.charges_per_second && a.latency_ms.p99 <= TARGETS.charges_p99_ms)}`,
    );
  }
  const b = report.b_end_to_end?.reported;
  if (b) {
    console.log(
      `b_end_to_end at ${b.target_rate}/s (${b.sustained ? 'sustained' : 'NOT sustained'}): e2e p50 ${b.end_to_end_ms.p50} ms p99 ${b.end_to_end_ms.p99} ms max ${b.end_to_end_ms.max} ms; charge response p50 ${b.charge_response_ms.p50} ms p99 ${b.charge_response_ms.p99} ms; ${b.callbacks_received}/${b.accepted} callbacks`,
    );
    for (const t of report.b_end_to_end.attempts) {
      if (t !== b)
        console.log(
          `  tried ${t.target_rate}/s: ${t.sustained ? 'sustained' : 'not sustained'}, e2e p50 ${t.end_to_end_ms.p50} ms p99 ${t.end_to_end_ms.p99} ms`,
        );
    }
    console.log(`  started at ${report.b_end_to_end.attempts[0].target_rate}/s: ${report.b_end_to_end.start_reason}`);
    const f = report.b_end_to_end.light_load;
    if (f)
      console.log(
        `  light load ${f.target_rate}/s: e2e p50 ${f.end_to_end_ms.p50} ms p99 ${f.end_to_end_ms.p99} ms max ${f.end_to_end_ms.max} ms`,
      );
    console.log(
      `  (b) target 1,000/s with p99 ≤ ${TARGETS.e2e_p99_ms} ms: ${mark(b.sustained && b.target_rate >= TARGETS.e2e_rate && b.end_to_end_ms.p99 <= TARGETS.e2e_p99_ms)}`,
    );
  }
  const c = report.c_callbacks;
  if (c) {
    console.log(
      `c_charge_backlog: ${c.delivered}/${c.expected} callbacks in ${c.seconds} s: ${c.deliveries_per_second} deliveries/s (peak 1 s ${c.deliveries_per_second_peak_1s}); settled ${c.settled_per_second}/s; delivery-only tail ${c.delivery_only_tail.per_second}/s over ${c.delivery_only_tail.deliveries}`,
    );
  }
  const c2 = report.c_deliveries;
  if (c2) {
    console.log(
      `c_delivery_backlog: ${c2.delivered}/${c2.expected} callbacks in ${c2.seconds} s: ${c2.deliveries_per_second} deliveries/s (peak 1 s ${c2.deliveries_per_second_peak_1s})`,
    );
  }
  if (c || c2) {
    const best = Math.max(c?.deliveries_per_second ?? 0, c2?.deliveries_per_second ?? 0);
    console.log(`  (c) target ≥ ${TARGETS.deliveries_per_second}/s: ${mark(best >= TARGETS.deliveries_per_second)}`);
  }
  const d = report.d_checkouts;
  if (d) {
    console.log(loadLine(d));
    console.log(
      `  (d) target ≥ ${TARGETS.checkouts_per_second}/s, p99 ≤ ${TARGETS.checkouts_p99_ms} ms: ${mark(d.ok_per_second >= TARGETS.checkouts_per_second && d.latency_ms.p99 <= TARGETS.checkouts_p99_ms)}`,
    );
  }
  const e = report.e_statement;
  if (e) {
    console.log(
      `e_statement: ${e.rows} rows in ${e.pages} pages, ${e.seconds} s: ${e.rows_per_second} rows/s; page ms first ${e.page_ms.first} middle ${e.page_ms.middle} last ${e.page_ms.last}`,
    );
  }
  const rt = report.round_trips;
  if (rt) {
    console.log(
      `postgres round trips: charge ${rt.charge_accept_api} (API), settlement + callback ${rt.charge_settle_and_callback_worker} (worker, relay polling excluded), checkout ${rt.checkout_initiate_api} (API); redis commands per charge ${rt.redis_commands_per_charge_all_processes}`,
    );
  }
  if (report.ledger_verify) console.log(`ledger:verify ok=${report.ledger_verify.ok} (exit ${report.ledger_verify.exit_code})`);
  console.log(
    `loadavg now ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`total ${report.total_seconds} s`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
