/**
 * Collection gateway benchmark (`npm run bench:collections`). Not part of `npm test`.
 *
 * 0. Runs the reference ceiling (bench/support/ceiling.ts runCeiling) with the same seconds and connections, before
 *    anything of its own, and at the end prints every rate beside its ratio to the ceiling and issue 10's targets.
 * 1. Starts a redis-server of its own (free port, nothing on disk) so no other process's workers take its jobs,
 *    creates and migrates a database of its own on the Postgres server of DATABASE_URL, starts a local HTTP
 *    receiver (node:http, answers 200 and timestamps every callback by its external_reference), and seeds a
 *    merchant with `node dist/src/admin/cli.js seed --json --callback-url …` (API key, KES service with a FIXED
 *    fee of 10 and bounds 1–1,000,000, funded settlement wallet). GatewayBench (bench/support/gateway-bench.ts)
 *    does this.
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
 * Environment: DATABASE_URL (server), BENCH_CEILING (the ceiling script, or skip), SANDBOX_SETTLE_DELAY_MS
 * (default 2000), BENCH_WORKERS (default 2), BENCH_DURATION (seconds of (a) and (d) and of the ceiling's runs,
 * default 15), BENCH_CONNECTIONS (default 32), BENCH_E2E_RATE (default 1000), BENCH_E2E_SECONDS (default 15),
 * BENCH_E2E_STEPS (the most rates (b) tries, default 3),
 * BENCH_STATEMENT_ROWS (default 100000), BENCH_DRAIN_TIMEOUT (seconds, default 150), BENCH_DELIVERY_BACKLOG
 * (default 10000), BENCH_E2E_FLOOR_RATE (light-load rate of (b), default 20), BENCH_REDIS_URL (use this Redis
 * instead of starting one), BENCH_PROFILE=1 (CPU profiles of the API and the workers, summarised by package),
 * BENCH_RESULTS=file.json, BENCH_KEEP_DATABASE=1.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { CEILING_TARGETS, printAgainstCeiling, runCeiling } from './support/ceiling';
import { watchDrain } from './support/drains';
import { ensureBuilt, log, sleep } from './support/environment';
import { GatewayBench } from './support/gateway-bench';
import { chargeBody, SANDBOX_PAYER } from './support/gateway-requests';
import { loadLine } from './support/load';
import { sampleWaits } from './support/machine';
import { openLoop, roundRate, stepRates } from './support/open-loop';
import { CountedRequest, countGatewayRoundTrips } from './support/round-trips';
import { percentiles, rateOf } from './support/statistics';

const SETTLE_DELAY_MS = Number(process.env.SANDBOX_SETTLE_DELAY_MS ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const E2E_RATE = Number(process.env.BENCH_E2E_RATE ?? 1000);
const E2E_SECONDS = Number(process.env.BENCH_E2E_SECONDS ?? 15);
const E2E_STEPS = Number(process.env.BENCH_E2E_STEPS ?? 3);
const E2E_FLOOR_RATE = Number(process.env.BENCH_E2E_FLOOR_RATE ?? 20);
const STATEMENT_ROWS = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000);
const DELIVERY_BACKLOG = Number(process.env.BENCH_DELIVERY_BACKLOG ?? 10_000);
const PAYER = SANDBOX_PAYER;
/** Issue 10 §5: callback deliveries to a local receiver (an absolute target, not a ratio). */
const DELIVERIES_TARGET_PER_SECOND = 3000;

/** What (b) and (c) drain: payments leaving 703, the outbox relay and deliveries. */
const PAYMENT_PROGRESS = {
  sql: `SELECT (SELECT count(*) FROM payments WHERE payment_status <> 703)::int AS settled,
               (SELECT count(*) FROM outbox WHERE relayed_at IS NULL AND available_at <= now())::int AS outbox_due,
               (SELECT count(*) FROM callback_deliveries WHERE status = 'PENDING')::int AS deliveries_pending`,
  queues: ['payments'],
};

async function main(): Promise<void> {
  const started = Date.now();
  ensureBuilt();
  const report: Record<string, unknown> = {};
  report.ceiling = await runCeiling();
  const bench = new GatewayBench('paygate_bench_coll', {
    settleDelayMs: SETTLE_DELAY_MS,
    profile: Boolean(process.env.BENCH_PROFILE),
    facts: { workers: WORKERS },
  });
  try {
    await bench.start(report);
    const charges = chargeRequest(bench);
    const checkouts = checkoutRequest(bench);

    // Warm-up (JIT, pools): 3 s of charges, not reported; they are settled with (a)'s in (c).
    await bench.drive('warm-up', 'charge', charges.path, charges.body('w-[<id>]'), 3);

    // (a) charges accepted/s, API only.
    report.a_charges = await bench.drive('a_charges', 'charge', charges.path, charges.body('a-[<id>]'));
    console.log(JSON.stringify(report.a_charges));

    // (d) checkout initiations/s, API only.
    report.d_checkouts = await bench.drive('d_checkouts', 'checkout', checkouts.path, checkouts.body('d-[<id>]'));
    console.log(JSON.stringify(report.d_checkouts));

    // (c) workers start and drain the backlog of settlements and callbacks.
    bench.startWorkers(WORKERS);
    report.c_callbacks = await drainCharges(bench);
    console.log(JSON.stringify(report.c_callbacks));
    report.c_deliveries = await drainDeliveries(bench);
    console.log(JSON.stringify(report.c_deliveries));

    // (b) end-to-end latency at a steady rate.
    report.b_end_to_end = await endToEnd(bench, report.c_callbacks as Record<string, any>);

    // (e) payment statement.
    report.e_statement = await statement(bench);
    console.log(JSON.stringify(report.e_statement));

    // Stop the measured processes; round trips are counted with a second API and one worker behind a proxy.
    await bench.stopChildren();
    report.round_trips = await countGatewayRoundTrips(bench, [charges, checkouts]);
    console.log(JSON.stringify({ round_trips: report.round_trips }, null, 2));

    report.ledger_verify = await bench.ledgerVerify();
    console.log(JSON.stringify({ ledger_verify: report.ledger_verify }, null, 2));
  } finally {
    await bench.close(report);
  }
  report.total_seconds = (Date.now() - started) / 1000;
  printSummary(report);
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

// ------------------------------------------------------------------------------------------------ (a) and (d)

function chargeRequest(bench: GatewayBench): CountedRequest {
  return { name: 'charge', path: '/v1/mobile-money/charge', calledBack: true, body: (reference) => chargeBody(bench, reference) };
}

function checkoutRequest(bench: GatewayBench): CountedRequest {
  return {
    name: 'checkout',
    path: '/v2/checkout/initiate',
    calledBack: false,
    body: (reference) =>
      JSON.stringify({
        merchant_transaction_id: reference,
        amount: 1500,
        payer_name: 'Bench Payer',
        payer_email: 'payer@example.com',
        payer_msisdn: PAYER,
        service_code: bench.merchant.serviceCode,
        account_number: 'ACC-BENCH',
        expires_in: 60,
        narration: 'Bench checkout',
        callback_url: `${bench.receiver.base}/checkout`,
        redirect_url: `${bench.receiver.base}/thanks`,
      }),
  };
}

// ------------------------------------------------------------------------------------------------ (c)

/** (c) The charges accepted so far are settled and called back by the workers just started. */
async function drainCharges(bench: GatewayBench) {
  const { meter, receiver } = bench;
  const [{ n: charges }] = (await meter.db.query(`SELECT count(*)::int AS n FROM payments WHERE checkout_session_id IS NULL`)).rows;
  const { times, result } = await watchDrain(
    bench,
    'c_charge_backlog',
    charges - receiver.uniqueReferences,
    'charge settled and called back',
    PAYMENT_PROGRESS,
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
async function drainDeliveries(bench: GatewayBench) {
  const { meter, merchant: m, receiver } = bench;
  const [sample] = (await meter.db.query(`SELECT payload FROM callback_deliveries WHERE event = 'successful_payment' LIMIT 1`)).rows;
  // Watched from before the insert; Promise.all also takes the watch's failure if the insert fails first.
  const [drained] = await Promise.all([
    watchDrain(bench, 'c_delivery_backlog', DELIVERY_BACKLOG, 'callback delivered', PAYMENT_PROGRESS),
    meter.db.query(
      `INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload)
       SELECT $1, 'collections', 'successful_payment', 'cd-' || k, $2, $3::jsonb || jsonb_build_object('external_reference', 'cd-' || k)
       FROM generate_series(1, $4) k`,
      [m.clientId, `${receiver.base}/cb`, sample.payload, DELIVERY_BACKLOG],
    ),
  ]);
  return drained.result;
}

// ------------------------------------------------------------------------------------------------ (b)

async function endToEnd(bench: GatewayBench, drained: Record<string, any>) {
  const drainRate = Number(drained.deliveries_per_second) || 0;
  let rate = E2E_RATE;
  let why = 'the target rate';
  let canGoUp = false;
  if (drainRate > 0 && drainRate < rate) {
    rate = roundRate(drainRate * 0.8);
    canGoUp = true;
    why = `(c) drained only ${drainRate} charges/s with the API idle, so ${E2E_RATE}/s cannot be sustained; starting at 80 % of that`;
  }
  log(`b_end_to_end: starting at ${rate}/s: ${why}`);
  const { tried, best } = await stepRates({
    start: rate,
    canGoUp,
    max: E2E_RATE,
    attempts: E2E_STEPS,
    run: async (r, attempt) => {
      const result = await pacedCharges(bench, r, E2E_SECONDS, `b${attempt}`);
      console.log(JSON.stringify(result));
      return result;
    },
    held: (result) => result.sustained,
  });
  const attempts = tried.map((t) => t.result);
  const reported = best?.result ?? attempts[attempts.length - 1];
  // The floor: the same path at a light load, where no queue forms; what the pipeline adds to the settle delay.
  const floor = await pacedCharges(bench, E2E_FLOOR_RATE, 5, 'bfloor');
  console.log(JSON.stringify(floor));
  return { start_reason: why, attempts, reported, light_load: floor };
}

/** Charges sent open loop (bench/support/open-loop.ts openLoop), each timed from send to callback. */
async function pacedCharges(bench: GatewayBench, rate: number, seconds: number, label: string) {
  const { meter, merchant: m, receiver } = bench;
  const prefix = `${label}-${process.pid}`;
  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const run = await openLoop(rate, seconds, (i) => ({
    base: bench.base,
    path: '/v1/mobile-money/charge',
    headers: { 'x-access-token': m.token },
    body: chargeBody(bench, `${prefix}-${i}`),
  }));
  const { start, sentAt, sent: total, statuses, errors } = run;
  // Until the last answer: a server that answers late fails the pace too.
  const sendSeconds = run.seconds;
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
    charge_response_ms: percentiles(run.responseMs.filter((ms) => !Number.isNaN(ms))),
    end_to_end_ms: percentiles(e2e),
    end_to_end_ms_by_third: slices,
    seconds_until_last_callback: +drainSeconds.toFixed(1),
    per_charge: meter.costs(before, after, seen, 'charge accepted, settled and called back'),
    db_backends_by_wait: waitSummary,
  };
}

// ------------------------------------------------------------------------------------------------ (e)

async function statement(bench: GatewayBench) {
  const { meter, base, merchant: m } = bench;
  const db = meter.db;
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

// ------------------------------------------------------------------------------------------------ summary

function printSummary(report: Record<string, any>): void {
  console.log('\n================ summary ================');
  const a = report.a_charges;
  if (a) console.log(loadLine(a));
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
    const met = c2.deliveries_per_second >= DELIVERIES_TARGET_PER_SECOND;
    console.log(`  (c) deliveries alone, target ≥ ${DELIVERIES_TARGET_PER_SECOND}/s: ${met ? 'met' : 'MISSED'}`);
  }
  const d = report.d_checkouts;
  if (d) console.log(loadLine(d));
  const e = report.e_statement;
  if (e) {
    console.log(
      `e_statement: ${e.rows} rows in ${e.pages} pages, ${e.seconds} s: ${e.rows_per_second} rows/s; page ms first ${e.page_ms.first} middle ${e.page_ms.middle} last ${e.page_ms.last}`,
    );
  }
  const rt = report.round_trips;
  if (rt) {
    console.log(
      `postgres round trips: charge ${rt.charge.api} (API), settlement + callback ${rt.charge.worker_until_called_back} (worker, relay polling excluded), checkout ${rt.checkout.api} (API); redis commands per charge ${rt.charge.redis_commands_all_processes}`,
    );
  }
  if (report.ledger_verify) console.log(`ledger:verify ok=${report.ledger_verify.ok} (exit ${report.ledger_verify.exit_code})`);
  printAgainstCeiling(report, [
    {
      label: '(a) charges accepted',
      per_second: a?.ok_per_second ?? null,
      p99_ms: a?.latency_ms.p99,
      ceiling: 'http_random',
      target: CEILING_TARGETS.charges,
    },
    {
      label: '(d) checkouts initiated',
      per_second: d?.ok_per_second ?? null,
      p99_ms: d?.latency_ms.p99,
      ceiling: 'http_random',
      target: CEILING_TARGETS.checkouts,
    },
    {
      label: '(b) settlement + callback, end to end, sustained',
      per_second: b?.sustained ? b.target_rate : null,
      ceiling: 'http_random',
      target: CEILING_TARGETS.settlementAndCallback,
    },
    {
      label: '(c) charges settled and called back',
      per_second: c?.deliveries_per_second ?? null,
      ceiling: 'http_random',
      target: CEILING_TARGETS.settlementAndCallback,
    },
    { label: '(c) charges settled (settled_at)', per_second: c?.settled_per_second ?? null, ceiling: 'http_random' },
    { label: '(c) callbacks delivered, alone', per_second: c2?.deliveries_per_second ?? null, ceiling: 'http_random' },
  ]);
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
