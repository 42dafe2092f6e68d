/**
 * Request pipeline benchmark (`npm run bench:pipeline`): the CPU one request of a hot money route costs the API
 * outside its service, split by stage. Not part of `npm test`.
 *
 * The real HTTP application (dist/, as `node dist/src/main.js api` builds it) runs in a child process on a database
 * of its own, with the services of the four hot routes replaced by stubs that answer a fixed body of the real
 * shape, so all that is left is the pipeline: Fastify (routing, body parsing, serialisation), helmet and the
 * no-store hook, pino-http, Nest's router, guards (throttler, wallet or gateway token, JSON-only), the validation
 * pipe and the error filters' absence of work. Requests go through `fastify.inject` (no socket), BENCH_CONCURRENCY
 * (16) in flight, BENCH_REQUESTS (2,000) per route and round after a warm-up, BENCH_ROUNDS (5) rounds.
 *
 * Per route it prints the process CPU (user + system) per request, measured without a profiler (the median of the
 * rounds, which take the routes in turn), and that figure
 * split by stage from a V8 CPU profile of a second identical run: each sample goes to the innermost frame that
 * belongs to a known package or app folder (Node internals and builtins count for their caller). `inject floor`
 * is a bare Fastify route driven the same way: what light-my-request and Fastify cost with no Nest at all.
 * It runs at LOG_LEVEL=info (the default, one access line per request, written to /dev/null) and at warn.
 *
 * Environment: DATABASE_URL (server), REDIS_URL (the gateway's rate limit counts in Redis), BENCH_REQUESTS,
 * BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_LOG_LEVELS (default "info,warn"), BENCH_TOP=n (the n functions with the
 * most self time per route), BENCH_RESULTS=file.json.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { Client } from 'pg';
import { createBenchDatabase, dropBenchDatabase, newBenchDatabase } from './support/database';
import { ensureBuilt, log, ROOT, SERVER_URL } from './support/environment';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TOP = Number(process.env.BENCH_TOP ?? 0);
const LOG_LEVELS = (process.env.BENCH_LOG_LEVELS ?? 'info,warn').split(',').map((l) => l.trim());

/** Where a profile sample's time goes: the first rule matching the innermost attributable frame. */
const STAGES: Array<[stage: string, match: RegExp]> = [
  [
    'token (passport, jsonwebtoken)',
    /node_modules\/(passport|passport-custom|passport-jwt|passport-strategy|jsonwebtoken|jws|jwa|@nestjs\/passport|@nestjs\/jwt|lodash\.|safe-buffer|ms|semver)\//,
  ],
  ['token (guards, version check)', /dist\/src\/auth\//],
  [
    'validation',
    /node_modules\/(class-validator|class-transformer|validator|libphonenumber-js|decimal\.js)\/|@nestjs\/common\/pipes\/|dist\/src\/common\/(http\/validation|validation\/|money|currencies)/,
  ],
  [
    'logging',
    /node_modules\/(pino|@pinojs\/redact|pino-http|nestjs-pino|fast-redact|sonic-boom|pino-std-serializers|quick-format-unescaped|fast-safe-stringify|on-exit-leak-free|thread-stream|atomic-sleep|get-caller-file)\/|dist\/src\/infra\/logging\//,
  ],
  ['helmet, no-store hook', /node_modules\/(@fastify\/helmet|helmet)\/|dist\/src\/http-app/],
  [
    'rate limit (throttler, Redis)',
    /node_modules\/(@nestjs\/throttler|ioredis|redis-parser|redis-errors|denque|cluster-key-slot|standard-as-callback)\/|dist\/src\/infra\/throttling\//,
  ],
  [
    'Nest (router, guards, filters)',
    /node_modules\/(@nestjs\/core|@nestjs\/common|@nestjs\/platform-fastify|rxjs|reflect-metadata|tslib)\/|dist\/src\/common\//,
  ],
  ['credential reloads (every 2 s)', /node_modules\/(pg|pg-pool|pg-protocol|typeorm)\//],
  ['inject (bench only)', /node_modules\/light-my-request\//],
  [
    'Fastify (parse, route, serialise)',
    /node_modules\/(fastify|find-my-way|avvio|fast-json-stringify|secure-json-parse|fast-querystring|@fastify\/[^/]+|toad-cache|rfdc|content-type|fast-uri|ret|safe-regex2|process-warning|abstract-logging|fastq|reusify|json-schema-ref-resolver|fast-decode-uri-component)\//,
  ],
  ['bench driver, stub services', /bench\/pipeline\.bench/],
];

// ------------------------------------------------------------------------------------------------ parent

async function main(): Promise<void> {
  ensureBuilt();
  const database = newBenchDatabase('paygate_pipeline');
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  const results: Record<string, unknown> = {};
  try {
    await createBenchDatabase(admin, database);
    for (const level of LOG_LEVELS) {
      log(`LOG_LEVEL=${level}: ${REQUESTS} requests per route, ${CONCURRENCY} in flight`);
      results[level] = await runChild(database.url, level);
      printTable(level, results[level] as RouteResult[]);
    }
  } finally {
    await dropBenchDatabase(admin, database.name);
    await admin.end();
  }
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(results, null, 2));
}

/** The child's stdout (every log line) goes to /dev/null; its figures come back over IPC. */
function runChild(databaseUrl: string, level: string): Promise<RouteResult[]> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['child'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: level, APP_ENV: process.env.APP_ENV ?? 'sandbox' },
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let answer: RouteResult[] | null = null;
    child.on('message', (message) => (answer = message as RouteResult[]));
    child.on('exit', (code) => (answer ? resolve(answer) : reject(new Error(`pipeline child exited with ${code}`))));
  });
}

interface RouteResult {
  route: string;
  status: number;
  cpu_us_per_request: number;
  stages_us: Record<string, number>;
  /** BENCH_TOP=n: the n functions with the most self time. */
  top?: string[];
}

function printTable(level: string, rows: RouteResult[]): void {
  const stages = [...new Set(rows.flatMap((r) => Object.keys(r.stages_us)))];
  console.log(`\nLOG_LEVEL=${level}: CPU µs per request (user + system), split by stage from a CPU profile`);
  console.log(['stage', ...rows.map((r) => r.route)].join(' | '));
  console.log(['total', ...rows.map((r) => `${r.cpu_us_per_request} (HTTP ${r.status})`)].join(' | '));
  for (const stage of stages) console.log([stage, ...rows.map((r) => r.stages_us[stage] ?? 0)].join(' | '));
  for (const row of rows.filter((r) => r.top)) console.log(`\n${row.route}, most self time:\n  ${row.top!.join('\n  ')}`);
  console.log(JSON.stringify({ [`pipeline_${level}`]: rows }));
}

// ------------------------------------------------------------------------------------------------ child

interface RouteCase {
  route: string;
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  /** Fresh per request, as a merchant's references are. */
  body: () => Record<string, unknown>;
}

async function child(): Promise<void> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const dist = (path: string) => require(join(ROOT, 'dist', 'src', path));
  const { createHttpApp } = dist('http-app');
  const { ClientsService } = dist('clients/clients.service');
  const { UsersService } = dist('auth/users.service');
  const { ApiKeysService } = dist('auth/gateway/api-keys.service');
  const { MoneyMovementsService } = dist('transactions/money-movements.service');
  const { ChargesService } = dist('charges/charges.service');
  const { CheckoutService } = dist('checkout/checkout.service');
  /* eslint-enable @typescript-eslint/no-require-imports */

  const app = await createHttpApp('api');
  const fastify = app.getHttpAdapter().getInstance();
  const code = `PIPE${randomBytes(3).toString('hex').toUpperCase()}`;
  const client = await app.get(ClientsService).create(code, 'Pipeline bench');
  await app.get(UsersService).create(client.id, code.toLowerCase(), 'pipeline-bench-password');
  const login = await fastify.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { username: code.toLowerCase(), password: 'pipeline-bench-password' },
  });
  const walletToken = login.json().access_token as string;
  const keys = await app.get(ApiKeysService).issue(client.id);
  const gatewayToken = (await fastify.inject({ method: 'POST', url: '/v1/auth', payload: keys })).json().access_token as string;

  // The services answer at once with a body of the real shape: what remains is the pipeline.
  const record = (side: string) => ({
    transaction_id: '0d5f2b7e-5c1a-4b8e-9a61-0d6c2f1e9b3a',
    account: side,
    client_service: 'TOPUP',
    transaction_type: 'DEBIT',
    transaction_source: 'INTERNAL',
    currency: 'KES',
    transaction_amount: '100.0000',
    transaction_fee: '0.0000',
    previous_balance: '1000000.0000',
    current_balance: '999900.0000',
    other_party_account: '1000000002',
    other_party_transaction_hash: null,
    source_transaction_id: 'INV-2024-0001',
    source_transaction_data: null,
    transaction_narration: 'Bench transfer',
    transaction_date: '2026-11-22T08:30:00.000Z',
    original_currency: null,
    original_amount: null,
    exchange_rate: null,
  });
  app.get(MoneyMovementsService).transfer = async () => ({
    source_transaction: record('1000000001'),
    destination_transaction: record('1000000002'),
  });
  app.get(MoneyMovementsService).creditOrDebit = async () => record('1000000001');
  app.get(ChargesService).accept = async (_: unknown, dto: { external_reference: string }) => ({
    status_code: 176,
    status_description: 'Charge posted successfully',
    total_amount: '110.0000',
    service_amount: '100.0000',
    transaction_charge: '10.0000',
    charge_request_id: 1042,
    external_reference: dto.external_reference,
    payment_url: null,
    next_step: null,
  });
  app.get(CheckoutService).initiate = async (_: unknown, dto: { merchant_transaction_id: string }) => ({
    merchant_transaction_id: dto.merchant_transaction_id,
    checkout_reference: 'CHK7Q2K9XWZ4',
    currency: 'KES',
    amount: 1500,
    expires_at: '2026-11-22T09:30:00.000Z',
    redirect_url: 'https://pay.example.com/checkout/CHK7Q2K9XWZ4',
  });

  let n = 0;
  const ref = () => `bench-${process.pid}-${++n}`;
  const wallet = { authorization: `Bearer ${walletToken}`, 'content-type': 'application/json' };
  const gateway = { 'x-access-token': gatewayToken, 'content-type': 'application/json' };
  const money = { client_code: code, client_service_code: 'TOPUP', transaction_amount: '100.50', currency: 'KES' };
  const cases: RouteCase[] = [
    {
      route: 'POST /api/v1/account-transfers',
      method: 'POST',
      url: '/api/v1/account-transfers',
      headers: wallet,
      body: () => ({
        ...money,
        source_account_number: '1000000001',
        destination_account_number: '1000000002',
        transaction_source: 'INTERNAL',
        source_transaction_id: ref(),
        transaction_narration: 'Bench transfer',
      }),
    },
    {
      route: 'POST /api/v1/transactions?command=CREDIT',
      method: 'POST',
      url: '/api/v1/transactions?command=CREDIT',
      headers: wallet,
      body: () => ({ ...money, account_number: '1000000001', source_transaction_id: ref() }),
    },
    {
      route: 'POST /v1/mobile-money/charge',
      method: 'POST',
      url: '/v1/mobile-money/charge',
      headers: gateway,
      body: () => ({
        external_reference: ref(),
        client_code: code,
        origin_channel_code: 'API',
        originator_msisdn: '254711000111',
        payer_msisdn: '254712345678',
        payer_name: 'Jane Payer',
        payer_email: 'jane.payer@example.com',
        service_code: 'TOPUP',
        account_number: 'INV-ACC-1',
        invoice_number: '',
        currency_code: 'KES',
        country_code: 'KEN',
        amount: '100',
        add_transaction_charge: false,
        transaction_charge: '0',
        payment_method_code: 'MMONEY_KEN',
        extra_data: { order: 'A-1' },
        description: 'Order A-1',
        notify_client: false,
        notify_originator: false,
        callback_url: 'https://merchant.example.com/callback',
      }),
    },
    {
      route: 'POST /v2/checkout/initiate',
      method: 'POST',
      url: '/v2/checkout/initiate',
      headers: gateway,
      body: () => ({
        merchant_transaction_id: ref(),
        amount: 1500,
        payer_name: 'Jane Payer',
        payer_email: 'jane.payer@example.com',
        payer_msisdn: '254712345678',
        service_code: 'TOPUP',
        account_number: 'ACC-2024-0001',
        expires_in: 60,
        narration: 'Order #42',
        callback_url: 'https://merchant.example.com/callback',
        redirect_url: 'https://merchant.example.com/thanks',
      }),
    },
  ];

  const sender = (rc: RouteCase) => () =>
    fastify.inject({ method: rc.method, url: rc.url, headers: rc.headers, payload: JSON.stringify(rc.body()) });
  const statuses: number[] = [];
  for (const rc of cases) {
    const first = await sender(rc)();
    if (first.statusCode >= 300) throw new Error(`${rc.route} answered ${first.statusCode}: ${first.body}`);
    statuses.push(first.statusCode);
  }
  for (const rc of cases) await drive(sender(rc), REQUESTS); // warm-up: every route is compiled before any is timed

  // Rounds go through every route in turn and each route's figure is its median round: the machine is shared,
  // and a burst of someone else's work then lands on one round of every route rather than on one route.
  const rounds: number[][] = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, rc] of cases.entries()) rounds[i].push(await drive(sender(rc), REQUESTS));
  }
  const results: RouteResult[] = [];
  for (const [i, rc] of cases.entries()) {
    const cpu = median(rounds[i]);
    const { shares, functions } = await profiled(() => drive(sender(rc), REQUESTS));
    const stages_us: Record<string, number> = {};
    for (const [stage, share] of Object.entries(shares)) stages_us[stage] = Math.round(share * cpu);
    const top = TOP > 0 ? functions.slice(0, TOP).map(([name, share]) => `${Math.round(share * cpu)} µs ${name}`) : undefined;
    results.push({ route: rc.route, status: statuses[i], cpu_us_per_request: Math.round(cpu), stages_us, top });
  }
  results.push(await injectFloor());
  await app.close();
  process.send!(results);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** CPU µs per request of `count` requests, CONCURRENCY in flight. */
async function drive(send: () => Promise<{ statusCode: number }>, count: number): Promise<number> {
  let issued = 0;
  let failed = 0;
  const start = process.cpuUsage();
  const worker = async () => {
    while (issued < count) {
      issued++;
      if ((await send()).statusCode >= 300) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(start);
  if (failed > 0) throw new Error(`${failed} of ${count} requests failed`);
  return (used.user + used.system) / count;
}

/** A bare Fastify route answering a fixed body, driven the same way: the cost of inject and Fastify alone. */
async function injectFloor(): Promise<RouteResult> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bare = require('fastify')();
  bare.post('/floor', async (request: { body: { id: string } }) => ({ id: request.body.id, status: 'ok' }));
  await bare.ready();
  const send = () => bare.inject({ method: 'POST', url: '/floor', headers: { 'content-type': 'application/json' }, payload: '{"id":"x"}' });
  await drive(send, REQUESTS);
  const runs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) runs.push(await drive(send, REQUESTS));
  const cpu = median(runs);
  await bare.close();
  return { route: 'inject floor (bare Fastify)', status: 200, cpu_us_per_request: Math.round(cpu), stages_us: {} };
}

/** Runs `work` under the V8 sampling profiler; the share of the busy samples each stage took. */
async function profiled(work: () => Promise<unknown>): Promise<ReturnType<typeof stageShares>> {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 50 });
  await post('Profiler.start');
  await work();
  const { profile } = await post<{ profile: Profile }>('Profiler.stop');
  session.disconnect();
  return stageShares(profile);
}

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

function stageShares(profile: Profile): { shares: Record<string, number>; functions: Array<[string, number]> } {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const { functionName, url } = byId.get(id)!.callFrame;
    let stage: string;
    if (functionName === '(garbage collector)') stage = 'GC';
    else if (functionName === '(program)') stage = '(program: V8 and native)';
    else {
      const match = url ? STAGES.find(([, re]) => re.test(url)) : undefined;
      const parentId = parent.get(id);
      stage = match ? match[0] : url && !url.startsWith('node:') ? 'other' : parentId ? classify(parentId) : 'Node internals';
    }
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  const selfTimes = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    const us = profile.timeDeltas[i] ?? 0;
    busy += us;
    const stage = classify(id);
    totals.set(stage, (totals.get(stage) ?? 0) + us);
    const { functionName, url } = byId.get(id)!.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^.*dist\/src\//, '')}`;
    selfTimes.set(name, (selfTimes.get(name) ?? 0) + us);
  });
  const byShare = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, us]): [string, number] => [k, us / busy]);
  return { shares: Object.fromEntries(byShare(totals)), functions: byShare(selfTimes) };
}

if (process.argv[2] === 'child') {
  child().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
