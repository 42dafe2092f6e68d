/**
 * Disbursement gateway benchmark (`npm run bench:disbursements`). Not part of `npm test`.
 *
 * 0. Runs the reference ceiling (bench/support.ts runCeiling) with the same seconds and connections, before
 *    anything of its own; at the end every rate is printed beside its ratio to http_random (no targets).
 * 1. bench/support.ts GatewayBench: a redis-server and a migrated database of its own, a callback receiver, a
 *    merchant seeded with `admin seed` (API key, KES service with a FIXED fee of 10 whose settlement wallet is the
 *    float, funded with 1,000,000 KES), the API and a gateway token. The float gets BENCH_FLOAT more KES with
 *    `admin wallet:fund` (so no payout meets 721 INSUFFICIENT_BALANCE) and airtime results are called back to the
 *    receiver (`admin callback:set --kind airtime`).
 * 2. With no worker running, so the API and Postgres have the machine, 3 s of payouts as a warm-up, then each
 *    driven by autocannon (BENCH_CONNECTIONS, BENCH_DURATION) with a fresh reference per request:
 *    (a) local payouts accepted/s: POST /v1/payouts/initiate, MOBILE via MMONEY_KEN to 254712345678 (the sandbox
 *        pays it), 100 KES (+ fee 10 held on the float);
 *    (b) B2B payouts accepted/s: POST /v1/payouts/b2b/initiate, PAYBILL 888880 via MMONEY_B2B, 100 KES;
 *    (c) airtime requests accepted/s: POST /v1/gw/airtime/send, one recipient 254712345678, 50 KES.
 * 3. (d) Starts BENCH_WORKERS workers. They submit the backlog to the sandbox rails, settle the holds (final
 *    status 700 / 602), deliver the callbacks and send the SMS after each local payout. Measured until every
 *    callback has arrived (BENCH_DRAIN_TIMEOUT): callbacks/s at the receiver, payouts and airtime recipients
 *    reaching their final status per second (from their final-status timestamps), and the costs per unit of every
 *    process (CPU, commits, WAL, Redis).
 * 4. Counts Postgres round trips per request: a second API and one worker behind counting proxies, 200 sequential
 *    requests of each kind, the worker's counted until the callback arrives; the SQL of one of each is traced.
 *    Skipped when (d) did not drain (the counting worker would take the rest of the backlog).
 * 5. Runs `admin ledger:verify --json`, drops the database, stops its children.
 *
 * Environment: DATABASE_URL (server), BENCH_CEILING (the ceiling script, or skip), SANDBOX_SETTLE_DELAY_MS
 * (default 2000), BENCH_WORKERS (default 2), BENCH_DURATION (default 15), BENCH_CONNECTIONS (default 32),
 * BENCH_SCENARIOS (comma list of payouts, b2b, airtime; default all), BENCH_FLOAT (KES added to the float,
 * default 1000000000), BENCH_DRAIN_TIMEOUT (seconds, default 150), BENCH_REDIS_URL, BENCH_PROFILE=1,
 * BENCH_RESULTS=file.json, BENCH_KEEP_DATABASE=1.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  countGatewayRoundTrips,
  CountedRequest,
  ensureBuilt,
  GatewayBench,
  loadLine,
  log,
  payoutBody,
  printAgainstCeiling,
  runCeiling,
  SANDBOX_PAYER,
  watchDrain,
} from './support';

const SETTLE_DELAY_MS = Number(process.env.SANDBOX_SETTLE_DELAY_MS ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const FLOAT_TOP_UP = process.env.BENCH_FLOAT ?? '1000000000';
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'payouts,b2b,airtime').split(',').map((s) => s.trim());
const RECIPIENT = SANDBOX_PAYER;
const PAYBILL = '888880';
/** The report key of each acceptance phase. */
const PHASES: Record<string, string> = { payouts: 'a_payouts', b2b: 'b_b2b', airtime: 'c_airtime' };

/** What (d) drains: payouts and airtime recipients reaching a final status, the outbox relay and deliveries. */
const DISBURSEMENT_PROGRESS = {
  sql: `SELECT (SELECT count(*) FROM payouts WHERE status <> 703)::int AS payouts_final,
               (SELECT count(*) FROM airtime_recipients WHERE service_status IN (602, 603))::int AS airtime_final,
               (SELECT count(*) FROM outbox WHERE relayed_at IS NULL AND available_at <= now())::int AS outbox_due,
               (SELECT count(*) FROM callback_deliveries WHERE status = 'PENDING')::int AS deliveries_pending`,
  queues: ['payouts', 'airtime', 'notifications'],
};

async function main(): Promise<void> {
  const started = Date.now();
  ensureBuilt();
  const report: Record<string, unknown> = {};
  report.ceiling = await runCeiling();
  const bench = new GatewayBench('paygate_bench_disb', {
    settleDelayMs: SETTLE_DELAY_MS,
    profile: Boolean(process.env.BENCH_PROFILE),
    facts: { workers: WORKERS },
  });
  try {
    await bench.start(report);
    const funded = await bench.cli(['wallet:fund', '--account', bench.merchant.settlementAccountNumber, '--amount', FLOAT_TOP_UP]);
    log(`float ${bench.merchant.settlementAccountNumber} topped up by ${FLOAT_TOP_UP} KES: ${JSON.stringify(funded)}`);
    const airtimeCallbacks = ['--kind', 'airtime', '--url', `${bench.receiver.base}/airtime`, '--username', 'u', '--password', 'p'];
    await bench.cli(['callback:set', '--client', bench.merchant.clientCode, ...airtimeCallbacks]);

    const requests = [payoutRequest(bench), b2bRequest(bench), airtimeRequest(bench)].filter((r) => SCENARIOS.includes(r.name));
    const [first] = requests;
    if (!first) throw new Error(`BENCH_SCENARIOS=${SCENARIOS.join(',')} names none of payouts, b2b, airtime`);

    // Warm-up (JIT, pools): 3 s, not reported; settled with the rest in (d).
    await bench.drive('warm-up', first.name, first.path, first.body('w-[<id>]'), 3);

    // (a)–(c) acceptance, API only.
    for (const [phase, request] of requests.map((r) => [PHASES[r.name], r] as const)) {
      report[phase] = await bench.drive(phase, `${request.name} accepted`, request.path, request.body(`${phase.slice(0, 1)}-[<id>]`));
      console.log(JSON.stringify(report[phase]));
    }

    // (d) workers start and drain the backlog: rails, holds, callbacks, SMS.
    bench.startWorkers(WORKERS);
    report.d_settlement = await drainBacklog(bench);
    console.log(JSON.stringify(report.d_settlement));

    await bench.stopChildren();
    if ((report.d_settlement as Record<string, unknown>).drained) {
      report.round_trips = await countGatewayRoundTrips(bench, requests);
      console.log(JSON.stringify({ round_trips: report.round_trips }, null, 2));
    } else {
      report.round_trips = {
        skipped: '(d) did not drain within BENCH_DRAIN_TIMEOUT: the counting worker would take the rest of the backlog',
      };
      log(`round trips skipped: ${(report.round_trips as { skipped: string }).skipped}`);
    }

    report.ledger_verify = await bench.ledgerVerify();
    console.log(JSON.stringify({ ledger_verify: report.ledger_verify }, null, 2));
  } finally {
    await bench.close(report);
  }
  report.total_seconds = (Date.now() - started) / 1000;
  printSummary(report);
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

// ------------------------------------------------------------------------------------------------ (a)–(c)

function payoutRequest(bench: GatewayBench): CountedRequest {
  return {
    name: 'payouts',
    path: '/v1/payouts/initiate',
    calledBack: true,
    body: (reference) => payoutBody(bench, reference),
  };
}

function b2bRequest(bench: GatewayBench): CountedRequest {
  return {
    name: 'b2b',
    path: '/v1/payouts/b2b/initiate',
    calledBack: true,
    body: (reference) =>
      JSON.stringify({
        payout_reference: reference,
        service_code: bench.merchant.serviceCode,
        payment_account_reference: 'INV-BENCH',
        recipient_name: 'Bench Supplier',
        recipient_type: 'PAYBILL',
        recipient_account_number: PAYBILL,
        amount: '100',
        payment_description: 'Bench B2B payout',
        payment_method: 'MMONEY_B2B',
        currency_code: 'KES',
        country_code: 'KEN',
        callback_url: `${bench.receiver.base}/b2b`,
      }),
  };
}

function airtimeRequest(bench: GatewayBench): CountedRequest {
  return {
    name: 'airtime',
    path: '/v1/gw/airtime/send',
    calledBack: true,
    body: (reference) =>
      JSON.stringify({ reference, service_code: bench.merchant.serviceCode, recipients: [{ phone_number: RECIPIENT, amount: '50' }] }),
  };
}

// ------------------------------------------------------------------------------------------------ (d)

/** (d) Everything accepted so far reaches its final status and is called back, by the workers just started. */
async function drainBacklog(bench: GatewayBench) {
  const db = bench.meter.db;
  const [{ n: expected }] = (
    await db.query(`SELECT ((SELECT count(*) FROM payouts) + (SELECT count(*) FROM airtime_recipients))::int AS n`)
  ).rows;
  const { result } = await watchDrain(
    bench,
    'd_settlement',
    expected,
    'payout or airtime recipient final and called back',
    DISBURSEMENT_PROGRESS,
  );
  // How fast each kind reached its final status, from the time it was set.
  const finals = (
    await db.query(
      `SELECT kind, count(*)::int AS n, extract(epoch FROM max(at) - min(at)) AS seconds FROM (
         SELECT kind, transaction_time AS at FROM payouts WHERE status <> 703
         UNION ALL SELECT 'AIRTIME', resolved_at FROM airtime_recipients WHERE service_status IN (602, 603)) f
       GROUP BY ROLLUP (kind) ORDER BY kind NULLS LAST`,
    )
  ).rows as Array<{ kind: string | null; n: number; seconds: string | null }>;
  const rate = (f: { n: number; seconds: string | null }) => (Number(f.seconds) > 0 ? Math.round(f.n / Number(f.seconds)) : null);
  const all = finals.find((f) => f.kind === null);
  return {
    ...result,
    final_per_second: all ? rate(all) : null,
    final_by_kind: Object.fromEntries(finals.filter((f) => f.kind !== null).map((f) => [f.kind, { final: f.n, per_second: rate(f) }])),
  };
}

// ------------------------------------------------------------------------------------------------ summary

function printSummary(report: Record<string, any>): void {
  console.log('\n================ summary ================');
  const accepted = Object.values(PHASES)
    .filter((phase) => report[phase])
    .map((phase) => report[phase]);
  for (const r of accepted) console.log(loadLine(r));
  const d = report.d_settlement;
  if (d) {
    const kinds = Object.entries(d.final_by_kind as Record<string, { final: number; per_second: number | null }>)
      .map(([kind, f]) => `${kind} ${f.final} at ${f.per_second}/s`)
      .join(', ');
    console.log(
      `d_settlement: ${d.delivered}/${d.expected} callbacks in ${d.seconds} s: ${d.deliveries_per_second} callbacks/s (peak 1 s ${d.deliveries_per_second_peak_1s}); final status ${d.final_per_second}/s (${kinds})`,
    );
  }
  const rt = report.round_trips;
  if (rt && !rt.skipped) {
    for (const name of ['payouts', 'b2b', 'airtime'].filter((n) => rt[n])) {
      console.log(
        `postgres round trips, ${name}: ${rt[name].api} (API, accepted), ${rt[name].worker_until_called_back} (worker, until called back, relay polling excluded); redis commands ${rt[name].redis_commands_all_processes}`,
      );
    }
  }
  if (report.ledger_verify) console.log(`ledger:verify ok=${report.ledger_verify.ok} (exit ${report.ledger_verify.exit_code})`);
  printAgainstCeiling(report, [
    ...accepted.map((r) => ({
      label: `${r.scenario} accepted`,
      per_second: r.ok_per_second,
      p99_ms: r.latency_ms.p99,
      ceiling: 'http_random' as const,
    })),
    { label: '(d) final status (payouts + airtime)', per_second: d?.final_per_second ?? null, ceiling: 'http_random' },
    { label: '(d) callbacks delivered', per_second: d?.deliveries_per_second ?? null, ceiling: 'http_random' },
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
