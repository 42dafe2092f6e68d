/**
 * Mixed benchmark (`npm run bench:mixed`). Not part of `npm test`.
 *
 * 0. Runs the reference ceiling (bench/support/ceiling.ts runCeiling) with the same seconds and connections, before
 *    anything of its own.
 * 1. GatewayBench (bench/support/gateway-bench.ts) with two APIs (two processes on two ports): a redis-server and a
 *    migrated database of its own, a callback receiver, a merchant seeded with `admin seed` (every callback kind to
 *    the receiver), a gateway token. The float gets BENCH_FLOAT more KES (`admin wallet:fund`). The seeded wallet
 *    user signs in (POST /api/v1/auth/login), creates an account type and a fee-less service through the wallet API,
 *    and BENCH_MIXED_WALLETS (1,000) wallets are written and funded in bulk SQL (createFundedWallets,
 *    bench/support/funded-wallets.ts).
 * 2. Starts BENCH_WORKERS (2) workers, then 3 s at a tenth of the start rate as a warm-up (not reported).
 * 3. Sends the four kinds open loop (openLoop, bench/support/open-loop.ts: the i-th request at i/rate s, whatever
 *    the answers), in the fixed proportions of BENCH_MIX (default transfers=40,charges=30,payouts=20,airtime=10;
 *    interleaved by smooth weighted round robin), alternating between the two APIs:
 *    - wallet transfers: POST /api/v1/account-transfers, 1 KES between two random wallets (as bench:ledger (i));
 *    - charges: POST /v1/mobile-money/charge, 100 KES from a payer the sandbox settles (as bench:collections);
 *    - local payouts: POST /v1/payouts/initiate, 100 KES to a number the sandbox pays (as bench:disbursements);
 *    - airtime: POST /v1/gw/airtime/send, 1, 2, 3, 1, … recipients of 50 KES each.
 *    Each step runs BENCH_E2E_SECONDS (15) at one rate, starting at BENCH_MIXED_RATE (400/s), up ×1.25 while every
 *    step held, down ×0.8 while none has (bench/support/open-loop.ts stepRates, as bench:collections (b)), at most
 *    BENCH_MIXED_STEPS (4) steps. A step holds when every request is answered 2xx, the sender kept to the schedule,
 *    each kind's request p99 is ≤ 200 ms, and every callback (one per charge, per payout and per airtime
 *    recipient; a local payout's first, of the two to its callback_url and the client's payouts endpoint) arrived
 *    within 5 s of its request. After the last send the bench waits for every callback (up to
 *    BENCH_DRAIN_TIMEOUT), so a step starts with no backlog of the one before. Per step and kind it prints request
 *    p50/p99 and callback lag p50/p99/max.
 * 4. Prints the highest rate held beside its ratio to http_random (issue 20's target ≥ 0.5×), runs
 *    `admin ledger:verify --json` and drops the database.
 *
 * Environment: DATABASE_URL (server), BENCH_CEILING (the ceiling script, or skip), SANDBOX_SETTLE_DELAY_MS
 * (default 2000), BENCH_WORKERS (default 2), BENCH_MIX, BENCH_MIXED_RATE (default 400), BENCH_E2E_SECONDS
 * (default 15), BENCH_MIXED_STEPS (default 4), BENCH_MIXED_WALLETS (default 1000), BENCH_FLOAT (default
 * 1000000000), BENCH_DRAIN_TIMEOUT (seconds, default 150), BENCH_DURATION and BENCH_CONNECTIONS (the ceiling's),
 * BENCH_REDIS_URL, BENCH_PROFILE=1, BENCH_RESULTS=file.json, BENCH_KEEP_DATABASE=1.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { CEILING_TARGETS, printAgainstCeiling, runCeiling } from './support/ceiling';
import { DRAIN_TIMEOUT_S } from './support/drains';
import { ensureBuilt, log, sleep } from './support/environment';
import { createFundedWallets } from './support/funded-wallets';
import { GatewayBench } from './support/gateway-bench';
import { chargeBody, payoutBody } from './support/gateway-requests';
import { sampleWaits } from './support/machine';
import { openLoop, PacedRequest, stepRates } from './support/open-loop';
import { recipientKey } from './support/receiver';
import { percentiles } from './support/statistics';

const SETTLE_DELAY_MS = Number(process.env.SANDBOX_SETTLE_DELAY_MS ?? 2000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const START_RATE = Number(process.env.BENCH_MIXED_RATE ?? 400);
const STEP_SECONDS = Number(process.env.BENCH_E2E_SECONDS ?? 15);
const STEPS = Number(process.env.BENCH_MIXED_STEPS ?? 4);
const WALLETS = Number(process.env.BENCH_MIXED_WALLETS ?? 1000);
const FLOAT_TOP_UP = process.env.BENCH_FLOAT ?? '1000000000';
const WALLET_FUNDING = '1000000.0000';
const APIS = 2;
/** Issue 20: a rate is held with request p99 ≤ 200 ms and every callback within 5 s of its request. */
const REQUEST_P99_MS = 200;
const CALLBACK_WITHIN_MS = 5000;

const KINDS = ['transfers', 'charges', 'payouts', 'airtime'] as const;
type Kind = (typeof KINDS)[number];

/** BENCH_MIX, e.g. transfers=40,charges=30,payouts=20,airtime=10: each kind's weight (a missing kind weighs 0). */
function parseMix(text: string): Record<Kind, number> {
  const mix = { transfers: 0, charges: 0, payouts: 0, airtime: 0 };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, weight] = part.split('=').map((x) => x.trim());
    if (!(KINDS as readonly string[]).includes(name) || !(Number(weight) >= 0)) {
      throw new Error(`BENCH_MIX: "${part}" is not <kind>=<weight> with kind one of ${KINDS.join(', ')}`);
    }
    mix[name as Kind] = Number(weight);
  }
  if (KINDS.every((k) => mix[k] === 0)) throw new Error('BENCH_MIX gives every kind a weight of 0');
  return mix;
}

const MIX = parseMix(process.env.BENCH_MIX ?? 'transfers=40,charges=30,payouts=20,airtime=10');

/** The kind of each of `n` requests: smooth weighted round robin, so the proportions hold over any stretch. */
function scheduleKinds(n: number): Kind[] {
  const total = KINDS.reduce((sum, k) => sum + MIX[k], 0);
  const current = { transfers: 0, charges: 0, payouts: 0, airtime: 0 };
  const out: Kind[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let best: Kind = KINDS[0];
    for (const k of KINDS) {
      current[k] += MIX[k];
      if (current[k] > current[best]) best = k;
    }
    current[best] -= total;
    out[i] = best;
  }
  return out;
}

interface Wallets {
  token: string;
  clientCode: string;
  serviceCode: string;
  accounts: string[];
}

async function main(): Promise<void> {
  const started = Date.now();
  ensureBuilt();
  const report: Record<string, unknown> = {};
  report.ceiling = await runCeiling();
  const bench = new GatewayBench('paygate_bench_mixed', {
    settleDelayMs: SETTLE_DELAY_MS,
    profile: Boolean(process.env.BENCH_PROFILE),
    apis: APIS,
    facts: { workers: WORKERS, mix: MIX, wallets: WALLETS },
  });
  try {
    await bench.start(report);
    const funded = await bench.cli(['wallet:fund', '--account', bench.merchant.settlementAccountNumber, '--amount', FLOAT_TOP_UP]);
    log(`float ${bench.merchant.settlementAccountNumber} topped up by ${FLOAT_TOP_UP} KES: ${JSON.stringify(funded)}`);
    const wallets = await seedWallets(bench);
    bench.startWorkers(WORKERS);

    const warm = await step(bench, wallets, Math.max(10, Math.round(START_RATE / 10)), 3, 'warm');
    log(`warm-up: ${warm.sent} requests, held ${warm.held}`);

    const { tried, best } = await stepRates({
      start: START_RATE,
      canGoUp: true,
      attempts: STEPS,
      run: async (rate, attempt) => {
        const result = await step(bench, wallets, rate, STEP_SECONDS, `m${attempt}`);
        printStep(result);
        return result;
      },
      held: (result) => result.held,
    });
    report.steps = tried.map((t) => t.result);
    report.highest_held = best ? best.rate : null;

    await bench.stopChildren();
    report.ledger_verify = await bench.ledgerVerify();
    console.log(JSON.stringify({ ledger_verify: report.ledger_verify }, null, 2));
  } finally {
    await bench.close(report);
  }
  report.total_seconds = (Date.now() - started) / 1000;
  printSummary(report);
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

// ------------------------------------------------------------------------------------------------ wallets

async function walletApi(base: string, token: string | null, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} → ${res.status} ${text}`);
  return JSON.parse(text);
}

/** The seeded wallet user's token, a fee-less service and BENCH_MIXED_WALLETS funded wallets of the merchant. */
async function seedWallets(bench: GatewayBench): Promise<Wallets> {
  const { merchant: m, base } = bench;
  const db = bench.meter.db;
  const t0 = Date.now();
  const login = await walletApi(base, null, '/api/v1/auth/login', { username: m.walletUsername, password: m.walletPassword });
  const token: string = login.access_token;
  const type = await walletApi(base, token, '/api/v1/account-types', { client_code: m.clientCode, account_type_name: 'Bench' });
  const service = await walletApi(base, token, '/api/v1/client-services', {
    client_code: m.clientCode,
    client_service_name: 'Bench transfers',
    service_code: 'CUSTOM_SERVICE',
    has_transaction_fee: false,
    minimum_transaction_amount: 1,
    maximum_transaction_amount: 1000000000,
    is_active: 1,
  });
  const [{ id: accountTypeId }] = (await db.query('SELECT id FROM account_types WHERE code = $1', [type.account_type_code])).rows;
  const [{ id: profileId }] = (await db.query('SELECT id FROM profiles WHERE client_id = $1 LIMIT 1', [m.clientId])).rows;
  const accounts = await createFundedWallets(db, {
    clientId: m.clientId,
    profileId,
    accountTypeId,
    count: WALLETS,
    funding: WALLET_FUNDING,
  });
  await db.query('ANALYZE');
  log(`${WALLETS} wallets funded with ${WALLET_FUNDING} KES each in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { token, clientCode: m.clientCode, serviceCode: service.client_service_code, accounts };
}

// ------------------------------------------------------------------------------------------------ one step

interface Sent {
  kind: Kind;
  /** The receiver's keys of the callbacks this request is to bring (none for a transfer). */
  callbacks: string[];
}

/**
 * One rate for `seconds`, open loop; then waits until every callback of the accepted requests has arrived (or
 * BENCH_DRAIN_TIMEOUT has passed since the last send).
 */
async function step(bench: GatewayBench, wallets: Wallets, rate: number, seconds: number, label: string) {
  const { meter, merchant: m, receiver } = bench;
  const total = Math.round(rate * seconds);
  const kinds = scheduleKinds(total);
  const prefix = `${label}-${process.pid}`;
  const sent: Sent[] = new Array(total);
  let airtimeRequests = 0;
  const gateway = { 'x-access-token': m.token };
  const pick = () => wallets.accounts[Math.floor(Math.random() * wallets.accounts.length)];
  const request = (i: number): PacedRequest => {
    const kind = kinds[i];
    const reference = `${prefix}-${i}`;
    const base = bench.bases[i % bench.bases.length];
    switch (kind) {
      case 'transfers': {
        const from = pick();
        let to = pick();
        while (to === from) to = pick();
        sent[i] = { kind, callbacks: [] };
        return {
          base,
          path: '/api/v1/account-transfers',
          headers: { authorization: `Bearer ${wallets.token}` },
          body: JSON.stringify({
            source_account_number: from,
            destination_account_number: to,
            client_code: wallets.clientCode,
            client_service_code: wallets.serviceCode,
            transaction_amount: 1,
            currency: 'KES',
            source_transaction_id: reference,
            transaction_source: 'INTERNAL',
            transaction_narration: 'bench transfer',
          }),
        };
      }
      case 'charges':
        sent[i] = { kind, callbacks: [reference] };
        return { base, path: '/v1/mobile-money/charge', headers: gateway, body: chargeBody(bench, reference) };
      case 'payouts':
        sent[i] = { kind, callbacks: [reference] };
        return { base, path: '/v1/payouts/initiate', headers: gateway, body: payoutBody(bench, reference) };
      case 'airtime': {
        // Distinct numbers within a request (one callback per recipient, keyed by reference and number).
        const recipients = Array.from({ length: 1 + (airtimeRequests++ % 3) }, (_, k) => ({
          phone_number: String(254712345671 + k),
          amount: '50',
        }));
        sent[i] = { kind, callbacks: recipients.map((r) => recipientKey(reference, r.phone_number)) };
        return {
          base,
          path: '/v1/gw/airtime/send',
          headers: gateway,
          body: JSON.stringify({ reference, service_code: m.serviceCode, recipients }),
        };
      }
    }
  };

  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const run = await openLoop(rate, seconds, request);
  const arrivalOf = (key: string, kind: Kind) => (kind === 'airtime' ? receiver.recipientArrivals : receiver.arrivals).get(key);
  const expected: Array<{ i: number; key: string }> = [];
  for (let i = 0; i < total; i++) {
    if (run.status[i] >= 200 && run.status[i] < 300) for (const key of sent[i].callbacks) expected.push({ i, key });
  }
  const deadline = run.start + (run.sendSeconds + DRAIN_TIMEOUT_S) * 1000;
  while (performance.now() < deadline && !expected.every(({ i, key }) => arrivalOf(key, sent[i].kind) !== undefined)) await sleep(250);
  const drainSeconds = (performance.now() - run.start) / 1000;
  const waitSummary = await waits.stop();
  const after = await meter.snapshot();

  const byKind: Record<string, Record<string, unknown>> = {};
  const reasons: string[] = [];
  for (const kind of KINDS.filter((k) => MIX[k] > 0)) {
    const indices = [...Array(total).keys()].filter((i) => kinds[i] === kind);
    const ok = indices.filter((i) => run.status[i] >= 200 && run.status[i] < 300).length;
    const failed = indices.filter((i) => run.status[i] === 0).length;
    const latency = percentiles(indices.map((i) => run.responseMs[i]).filter((ms) => !Number.isNaN(ms)));
    const lags: number[] = [];
    let callbacks = 0;
    for (const { i, key } of expected) {
      if (sent[i].kind !== kind) continue;
      callbacks++;
      const at = arrivalOf(key, kind);
      if (at !== undefined) lags.push(at - run.sentAt[i]);
    }
    const within = lags.filter((ms) => ms <= CALLBACK_WITHIN_MS).length;
    byKind[kind] = {
      sent: indices.length,
      ok,
      other_status: indices.length - ok - failed,
      failed,
      request_ms: latency,
      ...(kind === 'transfers'
        ? {}
        : {
            callbacks_expected: callbacks,
            callbacks_received: lags.length,
            callbacks_within_5s: within,
            callback_lag_ms: percentiles(lags),
          }),
    };
    if (ok < indices.length) reasons.push(`${kind}: ${indices.length - ok} of ${indices.length} not answered 2xx`);
    if (indices.length > 0 && !(latency.p99 <= REQUEST_P99_MS))
      reasons.push(`${kind}: request p99 ${latency.p99} ms > ${REQUEST_P99_MS} ms`);
    if (within < callbacks) reasons.push(`${kind}: ${callbacks - within} of ${callbacks} callbacks not within 5 s`);
  }
  if (run.sendSeconds > seconds * 1.05) reasons.push(`the sender fell behind (${run.sendSeconds.toFixed(2)} s to send ${seconds} s)`);
  const all = percentiles(run.responseMs.filter((ms) => !Number.isNaN(ms)));
  return {
    scenario: `mixed_${rate}_per_s`,
    rate,
    seconds,
    sent: total,
    send_seconds: +run.sendSeconds.toFixed(2),
    status_codes: run.statuses,
    errors: run.errors,
    held: reasons.length === 0,
    not_held_because: reasons,
    request_ms: all,
    by_kind: byKind,
    seconds_until_last_callback: +drainSeconds.toFixed(1),
    per_request: meter.costs(before, after, total, 'request of any kind'),
    db_backends_by_wait: waitSummary,
  };
}

// ------------------------------------------------------------------------------------------------ output

function printStep(r: Record<string, any>): void {
  console.log(JSON.stringify(r));
  console.log(stepLines(r).join('\n'));
}

function stepLines(r: Record<string, any>): string[] {
  const lines = [
    `mixed at ${r.rate}/s for ${r.seconds} s: ${r.held ? 'held' : 'NOT held'}; ${r.sent} requests, all kinds request p50 ${r.request_ms.p50} ms p99 ${r.request_ms.p99} ms; last callback ${r.seconds_until_last_callback} s after the start; machine busy ${r.per_request.machine_busy_percent}%`,
  ];
  for (const [kind, k] of Object.entries(r.by_kind as Record<string, any>)) {
    const callbacks =
      k.callbacks_expected === undefined
        ? ''
        : `; callbacks ${k.callbacks_received}/${k.callbacks_expected} (${k.callbacks_within_5s} within 5 s), lag p50 ${k.callback_lag_ms.p50} ms p99 ${k.callback_lag_ms.p99} ms max ${k.callback_lag_ms.max} ms`;
    lines.push(
      `  ${kind.padEnd(9)} ${String(k.ok).padStart(6)}/${k.sent} 2xx, request p50 ${k.request_ms.p50} ms p99 ${k.request_ms.p99} ms${callbacks}`,
    );
  }
  for (const reason of r.not_held_because) lines.push(`  not held: ${reason}`);
  return lines;
}

function printSummary(report: Record<string, any>): void {
  console.log('\n================ summary ================');
  const mix = KINDS.map((k) => `${k} ${MIX[k]}`).join(', ');
  console.log(
    `mix ${mix}; ${APIS} APIs, ${WORKERS} workers; SANDBOX_SETTLE_DELAY_MS ${SETTLE_DELAY_MS}; held: every request 2xx, each kind's p99 ≤ ${REQUEST_P99_MS} ms, every callback within ${CALLBACK_WITHIN_MS / 1000} s`,
  );
  for (const r of report.steps ?? []) console.log(stepLines(r).join('\n'));
  console.log(
    `highest rate held: ${report.highest_held === null || report.highest_held === undefined ? 'none' : `${report.highest_held}/s`}`,
  );
  if (report.ledger_verify) console.log(`ledger:verify ok=${report.ledger_verify.ok} (exit ${report.ledger_verify.exit_code})`);
  printAgainstCeiling(report, [
    {
      label: 'mixed, highest rate held',
      per_second: report.highest_held ?? null,
      ceiling: 'http_random',
      target: CEILING_TARGETS.mixedHeld,
    },
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
