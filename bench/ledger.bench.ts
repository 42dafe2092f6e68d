/**
 * Ledger and statement benchmark (`npm run bench:ledger`). Not part of `npm test`.
 *
 * 0. Runs the reference ceiling (bench/support/ceiling.ts runCeiling) with the same seconds and connections, before
 *    anything of its own, and at the end prints every load scenario's rate beside its ratio to the ceiling (the
 *    hot-wallet scenario to http_hot, the others to http_random) and issue 10's targets, met or missed.
 * 1. Creates a database of its own on the Postgres server named by DATABASE_URL (default
 *    postgres://postgres@127.0.0.1:5432/postgres), migrates it, and seeds one tenant with 10,000 funded wallets
 *    (bulk SQL that writes what the service writes: one FUNDING operation, entry, two postings and one transaction
 *    record per wallet, balances moved to match).
 * 2. Starts the real API in a child process (`node dist/src/main.js api`) and drives it over loopback with
 *    autocannon: transfers between random pairs, transfers that all debit one hot wallet, credits with fresh
 *    source_transaction_ids, and replays of one source_transaction_id.
 * 3. Inserts 100,000 transactions for one wallet and downloads its XLSX and PDF statements through the API,
 *    measuring rows/s and the server's peak RSS; then stalls a download to check that backpressure holds memory
 *    flat and that an abandoned download gives its connection back.
 * 4. Runs the ledger invariants (verifyLedger, what `ledger:verify` runs) and drops the database.
 *
 * Environment: DATABASE_URL (server), REDIS_URL (optional), BENCH_CEILING (the ceiling script, or skip),
 * BENCH_DURATION (seconds per load scenario and per ceiling run, default 15),
 * BENCH_CONNECTIONS (default 32), BENCH_WALLETS (default 10000), BENCH_STATEMENT_ROWS (default 100000),
 * BENCH_SCENARIOS (comma list of scenario names to run), BENCH_SKIP_STATEMENTS=1, BENCH_PROFILE=1 (CPU profile of
 * the API, summarised by package), BENCH_ROUND_TRIPS=1 (after the load scenarios, a second API behind a counting
 * proxy answers 100 sequential requests of each scenario: Postgres round trips per request and the SQL of one
 * request), BENCH_RESULTS=file.json (write every figure), BENCH_KEEP_DATABASE=1.
 */
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { hashSecret } from '../src/common/crypto/secret-hash';
import { CEILING_TARGETS, printAgainstCeiling, runCeiling, Throughput } from './support/ceiling';
import { count, createBenchDatabase, dropBenchDatabase, newBenchDatabase } from './support/database';
import { CONNECTIONS, DURATION, ensureBuilt, freePort, log, ROOT, SERVER_URL, sleep } from './support/environment';
import { createFundedWallets } from './support/funded-wallets';
import { driveLoad, loadLine } from './support/load';
import { cpuTimes, machineFacts } from './support/machine';
import { startRole, stopChild, waitForLive } from './support/processes';
import { summariseProfile } from './support/profiles';
import { PgRoundTripCounter } from './support/round-trips';

const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000);
const STATEMENT_ROWS = Number(process.env.BENCH_STATEMENT_ROWS ?? 100_000);
const FUNDING = '1000000.0000';
/** BENCH_PROFILE=1: run the API under --cpu-prof and print where its CPU time went, by package. */
const PROFILE_DIR = process.env.BENCH_PROFILE ? mkdtempSync(join(tmpdir(), 'paygate-bench-prof-')) : null;

interface Tenant {
  clientId: string;
  clientCode: string;
  token: string;
  serviceCode: string;
  feeServiceCode: string;
  accounts: string[];
  statementAccount: string;
}

async function main(): Promise<void> {
  const started = Date.now();
  ensureBuilt();
  const report: Record<string, unknown> = {};
  report.ceiling = await runCeiling();
  const database = newBenchDatabase();
  const { name: dbName, url: dbUrl } = database;
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  let server: ChildProcess | null = null;
  try {
    report.machine = await machineFacts(admin);
    console.log(JSON.stringify({ machine: report.machine }, null, 2));

    await createBenchDatabase(admin, database);

    const db = new Client({ connectionString: dbUrl });
    await db.connect();
    try {
      const t0 = Date.now();
      const clientCode = `BENCH${randomBytes(3).toString('hex').toUpperCase()}`;
      const password = `bench-${randomBytes(8).toString('hex')}`;
      await createTenant(db, clientCode, password);
      log(`tenant ${clientCode} created (${Date.now() - t0} ms)`);

      const port = await freePort();
      server = startRole('api', { env: { DATABASE_URL: dbUrl, PORT: String(port) }, profileDir: PROFILE_DIR });
      const base = `http://127.0.0.1:${port}`;
      await waitForLive(base, server);
      log(`API child pid ${server.pid} listening on ${base}`);

      const tenant = await seedTenant(db, base, clientCode, password);
      report.seed = { wallets: WALLETS, seconds: (Date.now() - t0) / 1000 };
      log(`seeded ${WALLETS} funded wallets in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

      const only = process.env.BENCH_SCENARIOS?.split(',').map((x) => x.trim());
      const scenarios = loadScenarios(tenant).filter((sc) => !only || only.includes(sc.name));
      const results: Record<string, unknown>[] = [];
      for (const scenario of scenarios) {
        if (scenario.prepare) await scenario.prepare(base);
        const entriesBefore = await count(db, 'journal_entries');
        const result = await drive(base, tenant, scenario, db, dbName, server.pid!);
        result.new_entries = (await count(db, 'journal_entries')) - entriesBefore;
        results.push(result);
        console.log(JSON.stringify(result));
      }
      report.load = results;
      if (process.env.BENCH_ROUND_TRIPS) report.round_trips = await roundTrips(dbUrl, tenant, scenarios);

      if (!process.env.BENCH_SKIP_STATEMENTS) report.statements = await statements(db, base, tenant, server.pid!, dbName);
      report.ledger = await verify(db);
      console.log(JSON.stringify({ ledger: report.ledger }, null, 2));
    } finally {
      await db.end();
    }
  } finally {
    // After the statement downloads the API takes over a minute to exit on SIGTERM; a profile is written only on exit.
    if (server) await stopChild(server, PROFILE_DIR ? 120_000 : 10_000);
    if (PROFILE_DIR) report.server_profile = summariseProfile(PROFILE_DIR);
    await dropBenchDatabase(admin, dbName);
    await admin.end();
  }
  report.total_seconds = (Date.now() - started) / 1000;
  printSummary(report);
  if (process.env.BENCH_RESULTS) writeFileSync(process.env.BENCH_RESULTS, JSON.stringify(report, null, 2));
}

// ------------------------------------------------------------------------------------------------ environment

/** A client with one wallet user, written as ClientsService and UsersService write them (argon2 password hash). */
async function createTenant(db: Client, clientCode: string, password: string): Promise<void> {
  const [{ id }] = (await db.query('INSERT INTO clients (code, name) VALUES ($1, $2) RETURNING id', [clientCode, 'Benchmark merchant']))
    .rows;
  await db.query('INSERT INTO users (client_id, username, password_hash) VALUES ($1, $2, $3)', [
    id,
    `bench-${clientCode.toLowerCase()}`,
    await hashSecret(password),
  ]);
}

// ------------------------------------------------------------------------------------------------ seeding

async function api(base: string, token: string | null, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return JSON.parse(text);
}

async function seedTenant(db: Client, base: string, clientCode: string, password: string): Promise<Tenant> {
  const login = await api(base, null, 'POST', '/api/v1/auth/login', { username: `bench-${clientCode.toLowerCase()}`, password });
  const token: string = login.access_token;
  await api(base, token, 'POST', '/api/v1/profiles', {
    client_code: clientCode,
    profile_name: 'Bench Holder',
    profile_type: 'BUSINESS',
    client_profile_id: 'bench-profile',
    profile_email: 'bench@example.com',
    profile_msisdn: '+254700000099',
    contact_person_name: 'Bench Holder',
    contact_person_email: 'bench@example.com',
    contact_person_msisdn: '+254700000098',
    identification_number: 'BENCH-1',
    physical_address: 'Loopback 127',
    country: 'Kenya',
    is_active: 1,
  });
  const type = await api(base, token, 'POST', '/api/v1/account-types', { client_code: clientCode, account_type_name: 'Bench' });
  const service = (fee: boolean) =>
    api(base, token, 'POST', '/api/v1/client-services', {
      client_code: clientCode,
      client_service_name: fee ? 'Bench with fee' : 'Bench',
      service_code: 'CUSTOM_SERVICE',
      has_transaction_fee: fee,
      ...(fee ? { transaction_fee_type: 'FIXED', transaction_fee: 0.5 } : {}),
      minimum_transaction_amount: 1,
      maximum_transaction_amount: 1000000000,
      is_active: 1,
    });
  const plain = await service(false);
  const withFee = await service(true);
  // One wallet through the API, so the settlement account exists exactly as the service creates it.
  const first = await api(base, token, 'POST', '/api/v1/accounts', {
    client_code: clientCode,
    client_profile_id: 'bench-profile',
    account_type_code: type.account_type_code,
    account_name: 'Bench wallet 0',
    currency: 'KES',
    minimum_balance: 0,
    can_overdraw: false,
    status: 'ACTIVE',
  });
  await api(base, token, 'POST', '/api/v1/transactions?command=CREDIT', {
    account_number: first.account_number,
    client_code: clientCode,
    client_service_code: plain.client_service_code,
    transaction_amount: Number(FUNDING),
    currency: 'KES',
    source_transaction_id: 'bench-seed-0',
    transaction_narration: 'Bench funding',
  });

  const [{ id: clientId }] = (await db.query('SELECT id FROM clients WHERE code = $1', [clientCode])).rows;
  const [{ id: profileId }] = (await db.query(`SELECT id FROM profiles WHERE client_id = $1`, [clientId])).rows;
  const [{ id: typeId }] = (await db.query(`SELECT id FROM account_types WHERE client_id = $1`, [clientId])).rows;

  // The other wallets in bulk, funded as the service funds them.
  await createFundedWallets(db, { clientId, profileId, accountTypeId: typeId, count: WALLETS, funding: FUNDING });

  // A wallet for the statement benchmark, filled later.
  const statementWallet = await api(base, token, 'POST', '/api/v1/accounts', {
    client_code: clientCode,
    client_profile_id: 'bench-profile',
    account_type_code: type.account_type_code,
    account_name: 'Statement wallet',
    currency: 'KES',
    minimum_balance: 0,
    can_overdraw: false,
    status: 'ACTIVE',
  });
  await db.query('ANALYZE');
  const accounts = (
    await db.query(
      `SELECT a.account_number FROM ledger_accounts a JOIN wallets w ON w.id = a.id
                    WHERE a.client_id = $1 AND w.account_name LIKE 'Bench wallet %' ORDER BY a.account_number`,
      [clientId],
    )
  ).rows.map((r: { account_number: string }) => r.account_number);
  return {
    clientId,
    clientCode,
    token,
    serviceCode: plain.client_service_code,
    feeServiceCode: withFee.client_service_code,
    accounts,
    statementAccount: statementWallet.account_number,
  };
}

// ------------------------------------------------------------------------------------------------ load scenarios

interface Scenario {
  name: string;
  path: string;
  body: () => Record<string, unknown>;
  prepare?: (base: string) => Promise<void>;
}

function loadScenarios(t: Tenant): Scenario[] {
  let seq = 0;
  const ref = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;
  const pick = () => t.accounts[Math.floor(Math.random() * t.accounts.length)];
  const pair = () => {
    const a = pick();
    let b = pick();
    while (b === a) b = pick();
    return [a, b];
  };
  const transfer = (from: string, to: string, service = t.serviceCode) => ({
    source_account_number: from,
    destination_account_number: to,
    client_code: t.clientCode,
    client_service_code: service,
    transaction_amount: 1,
    currency: 'KES',
    source_transaction_id: ref('tr'),
    transaction_source: 'INTERNAL',
    transaction_narration: 'bench transfer',
  });
  const hot = t.accounts[0];
  const replayBody = {
    account_number: t.accounts[1],
    client_code: t.clientCode,
    client_service_code: t.serviceCode,
    transaction_amount: 5,
    currency: 'KES',
    source_transaction_id: `replay-${process.pid}`,
    transaction_narration: 'bench replay',
  };
  return [
    { name: 'i_transfers_random_pairs', path: '/api/v1/account-transfers', body: () => transfer(...(pair() as [string, string])) },
    {
      name: 'i_b_transfers_random_pairs_with_fee',
      path: '/api/v1/account-transfers',
      body: () => transfer(...(pair() as [string, string]), t.feeServiceCode),
    },
    {
      name: 'ii_transfers_one_hot_source',
      path: '/api/v1/account-transfers',
      body: () => {
        let to = pick();
        while (to === hot) to = pick();
        return transfer(hot, to);
      },
    },
    {
      name: 'iii_credits_fresh_ids',
      path: '/api/v1/transactions?command=CREDIT',
      body: () => ({
        account_number: pick(),
        client_code: t.clientCode,
        client_service_code: t.serviceCode,
        transaction_amount: 2,
        currency: 'KES',
        source_transaction_id: ref('cr'),
        transaction_narration: 'bench credit',
      }),
    },
    {
      name: 'iv_replays_one_source_transaction_id',
      path: '/api/v1/transactions?command=CREDIT',
      body: () => replayBody,
      prepare: async (base) => {
        await api(base, t.token, 'POST', '/api/v1/transactions?command=CREDIT', replayBody);
      },
    },
  ];
}

async function drive(base: string, t: Tenant, scenario: Scenario, db: Client, dbName: string, serverPid: number) {
  return driveLoad({
    name: scenario.name,
    base,
    serverPid,
    db,
    dbName,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        method: 'POST',
        path: scenario.path,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
        setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify(scenario.body()) }),
      },
    ],
  });
}

/**
 * BENCH_ROUND_TRIPS=1: a second API, connected to Postgres through a counting proxy, answers 100 sequential
 * requests of each scenario; the SQL of one more request is traced.
 */
async function roundTrips(dbUrl: string, t: Tenant, scenarios: Scenario[]) {
  const proxy = await PgRoundTripCounter.for(dbUrl);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startRole('api', { env: { DATABASE_URL: proxy.url(dbUrl), PORT: String(port) } });
  const N = 100;
  const results: Record<string, unknown> = {};
  try {
    await waitForLive(base, server);
    for (const scenario of scenarios) {
      if (scenario.prepare) await scenario.prepare(base);
      for (let i = 0; i < 10; i++) await api(base, t.token, 'POST', scenario.path, scenario.body());
      proxy.roundTrips = 0;
      for (let i = 0; i < N; i++) await api(base, t.token, 'POST', scenario.path, scenario.body());
      const perRequest = proxy.roundTrips / N;
      proxy.trace = [];
      await api(base, t.token, 'POST', scenario.path, scenario.body());
      const result = { round_trips: perRequest, trace: proxy.trace };
      proxy.trace = null;
      results[scenario.name] = result;
      console.log(JSON.stringify({ scenario: scenario.name, ...result }));
    }
  } finally {
    await stopChild(server);
    await proxy.close();
  }
  return results;
}

// ------------------------------------------------------------------------------------------------ statements

async function statements(db: Client, base: string, t: Tenant, serverPid: number, dbName: string) {
  const t0 = Date.now();
  const from = await fillStatementWallet(db, t);
  const fillSeconds = (Date.now() - t0) / 1000;
  log(`inserted ${STATEMENT_ROWS} transactions for wallet ${t.statementAccount} in ${fillSeconds.toFixed(1)} s`);
  const query = new URLSearchParams({
    account_number: t.statementAccount,
    start_date: from.toISOString(),
    end_date: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const results: Record<string, unknown> = { rows: STATEMENT_ROWS, insert_seconds: fillSeconds };
  for (const docType of ['EXCEL', 'PDF'] as const) {
    results[docType] = await download(base, t, `${query}&doc_type=${docType}`, serverPid);
    console.log(JSON.stringify({ statement: docType, ...(results[docType] as object) }));
  }
  results.stalled_reader = await stalledDownload(base, t, `${query}&doc_type=EXCEL`, serverPid, db, dbName);
  console.log(JSON.stringify({ stalled_reader: results.stalled_reader }));
  return results;
}

/** Writes STATEMENT_ROWS alternating credits and debits for the statement wallet, as the service would record them. */
async function fillStatementWallet(db: Client, t: Tenant): Promise<Date> {
  const [wallet] = (await db.query('SELECT id, posting_count FROM ledger_accounts WHERE account_number = $1', [t.statementAccount])).rows;
  const [settlement] = (
    await db.query(
      `SELECT id, account_number, balance, posting_count FROM ledger_accounts
        WHERE client_id = $1 AND kind = 'SETTLEMENT' AND currency = 'KES'`,
      [t.clientId],
    )
  ).rows;
  const from = new Date(Date.now() - 1000);
  await db.query('BEGIN');
  await db.query('SELECT 1 FROM ledger_accounts WHERE id = ANY($1) FOR UPDATE', [[wallet.id, settlement.id]]);
  // Odd rows credit 100, even rows debit 40: the balance only grows, so no floor is ever crossed.
  await db.query(
    `CREATE TEMP TABLE bench_rows ON COMMIT DROP AS
     SELECT k, CASE WHEN k % 2 = 1 THEN 100.0000 ELSE -40.0000 END::numeric AS amount,
            nextval('journal_entries_id_seq') AS entry_id, gen_random_uuid() AS op_id,
            $1::timestamptz + k * interval '1 millisecond' AS at
     FROM generate_series(1, $2) k`,
    [from, STATEMENT_ROWS],
  );
  await db.query(`ALTER TABLE bench_rows ADD COLUMN wallet_after numeric, ADD COLUMN settlement_after numeric`);
  await db.query(
    `UPDATE bench_rows r SET wallet_after = s.run, settlement_after = $1::numeric - s.run
     FROM (SELECT k, sum(amount) OVER (ORDER BY k) AS run FROM bench_rows) s WHERE s.k = r.k`,
    [settlement.balance],
  );
  await db.query(
    `INSERT INTO journal_entries (id, client_id, kind, created_at)
     SELECT entry_id, $1, CASE WHEN amount > 0 THEN 'WALLET_CREDIT' ELSE 'WALLET_DEBIT' END, at FROM bench_rows ORDER BY k`,
    [t.clientId],
  );
  await db.query(
    `INSERT INTO postings (entry_id, client_id, account_id, currency, amount, balance_after, created_at, account_seq)
     SELECT entry_id, $3, account_id, 'KES', amt, after, at, seq FROM (
       SELECT k, 0 AS leg, entry_id, $1::uuid AS account_id, amount AS amt, wallet_after AS after, at, $4::bigint + k AS seq
       FROM bench_rows
       UNION ALL
       SELECT k, 1, entry_id, $2::uuid, -amount, settlement_after, at, $5::bigint + k FROM bench_rows) x
     ORDER BY k, leg`,
    [wallet.id, settlement.id, t.clientId, wallet.posting_count, settlement.posting_count],
  );
  await db.query(
    `INSERT INTO wallet_operations (id, client_id, kind, source_transaction_id, entry_id, created_at)
     SELECT op_id, $1, CASE WHEN amount > 0 THEN 'CREDIT' ELSE 'DEBIT' END, 'stmt-' || k, entry_id, at FROM bench_rows ORDER BY k`,
    [t.clientId],
  );
  await db.query(
    `INSERT INTO wallet_transactions (operation_id, client_id, account_id, transaction_type, transaction_source, currency,
       transaction_amount, previous_balance, current_balance, other_party_account, source_transaction_id,
       transaction_narration, transaction_date, created_at)
     SELECT op_id, $1, $2, CASE WHEN amount > 0 THEN 'CREDIT' ELSE 'DEBIT' END,
            CASE WHEN amount > 0 THEN 'EXTERNAL_CREDIT' ELSE 'EXTERNAL_DEBIT' END, 'KES', abs(amount),
            wallet_after - amount, wallet_after, $3, 'stmt-' || k, 'Bench statement row ' || k, at, at
     FROM bench_rows ORDER BY k`,
    [t.clientId, wallet.id, settlement.account_number],
  );
  await db.query(
    `UPDATE ledger_accounts a SET balance = a.balance + d.delta, posting_count = a.posting_count + d.postings
     FROM (SELECT $1::uuid AS id, sum(amount) AS delta, count(*) AS postings FROM bench_rows
           UNION ALL SELECT $2::uuid, -sum(amount), count(*) FROM bench_rows) d
     WHERE a.id = d.id`,
    [wallet.id, settlement.id],
  );
  await db.query('COMMIT');
  await db.query('ANALYZE');
  return from;
}

function rssKb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Resets the kernel's peak-RSS counter (VmHWM) of a process, so the next peak is this download's own. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function download(base: string, t: Tenant, query: string, pid: number) {
  const before = rssKb(pid);
  const reset = resetPeak(pid);
  let peakSampled = before.rss;
  const sampler = setInterval(() => {
    peakSampled = Math.max(peakSampled, rssKb(pid).rss);
  }, 50);
  const cpu0 = cpuTimes(pid);
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/account-statements/doc?${query}`, { headers: { authorization: `Bearer ${t.token}` } });
  const firstByte = performance.now() - t0;
  let bytes = 0;
  if (!res.body) throw new Error('no body');
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const after = rssKb(pid);
  if (res.status !== 200) throw new Error(`statement → ${res.status}`);
  return {
    status: res.status,
    content_type: res.headers.get('content-type'),
    bytes,
    seconds: +seconds.toFixed(2),
    rows_per_second: Math.round(STATEMENT_ROWS / seconds),
    first_byte_ms: Math.round(firstByte),
    server_cpu_percent: Math.round(((cpuTimes(pid) - cpu0) / seconds) * 100),
    rows_per_server_cpu_second: Math.round(STATEMENT_ROWS / Math.max(cpuTimes(pid) - cpu0, 0.01)),
    server_rss_mb_before: +(before.rss / 1024).toFixed(1),
    server_peak_rss_mb: +((reset ? after.hwm : Math.max(after.hwm, peakSampled)) / 1024).toFixed(1),
    server_peak_rss_mb_sampled: +(peakSampled / 1024).toFixed(1),
    peak_source: reset ? 'VmHWM after clear_refs reset' : 'VmHWM since process start (reset not permitted)',
  };
}

/**
 * Reads the first chunk of a statement, then stops reading for 3 s: with backpressure the server stops fetching
 * rows and its memory stays flat. Then the download is abandoned, and the statement's database connection must be
 * handed back (no session left idle in transaction).
 */
async function stalledDownload(base: string, t: Tenant, query: string, pid: number, db: Client, dbName: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/v1/account-statements/doc?${query}`, {
    headers: { authorization: `Bearer ${t.token}` },
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  let bytes = 0;
  for (let i = 0; i < 2; i++) bytes += (await reader.read()).value?.length ?? 0;
  const rssAtStall = rssKb(pid).rss;
  const samples: number[] = [];
  for (let i = 0; i < 30; i++) {
    await sleep(100);
    samples.push(rssKb(pid).rss);
  }
  const busy = await sessions(db, dbName);
  controller.abort();
  await reader.cancel().catch(() => undefined);
  await sleep(1000);
  const after = await sessions(db, dbName);
  return {
    bytes_read_before_stall: bytes,
    server_rss_mb_at_stall: +(rssAtStall / 1024).toFixed(1),
    server_rss_mb_max_during_3s_stall: +(Math.max(...samples) / 1024).toFixed(1),
    db_sessions_during_stall: busy,
    db_sessions_after_abort: after,
  };
}

async function sessions(db: Client, dbName: string) {
  const { rows } = await db.query(
    `SELECT coalesce(state, '?') || coalesce(' (' || wait_event_type || '/' || wait_event || ')', '') || ': ' || left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 40) AS what,
            count(*)::int AS n
     FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() GROUP BY 1`,
    [dbName],
  );
  return Object.fromEntries(rows.map((r: { what: string; n: number }) => [r.what, r.n]));
}

// ------------------------------------------------------------------------------------------------ verification

/** The ledger invariants (a)-(d) of the provider contract, by the service's own verifyLedger, as `ledger:verify --json` prints them. */
async function verify(db: Client) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { verifyLedger } = require(join(ROOT, 'dist', 'src', 'ledger', 'ledger-invariants.js'));
  const manager = { query: async (sql: string, params?: unknown[]) => (await db.query(sql, params)).rows };
  const t0 = Date.now();
  const results: Array<{ name: string; description: string; violations: unknown[] }> = await verifyLedger(manager);
  return {
    ok: results.every((r) => r.violations.length === 0),
    seconds: (Date.now() - t0) / 1000,
    invariants: results.map((r) => ({
      name: r.name,
      description: r.description,
      violations: r.violations.length,
      examples: r.violations.slice(0, 5),
    })),
  };
}

/** Each scenario's ceiling (the hot wallet's is http_hot) and issue 10's target where it sets one. */
function againstWhat(r: Record<string, any>): Throughput {
  const figure = { label: r.scenario, per_second: r.ok_per_second, p99_ms: r.latency_ms.p99 };
  switch (r.scenario) {
    case 'i_transfers_random_pairs':
      return { ...figure, ceiling: 'http_random', target: CEILING_TARGETS.transfersRandom };
    case 'ii_transfers_one_hot_source':
      return { ...figure, ceiling: 'http_hot', target: CEILING_TARGETS.transfersHot };
    case 'iii_credits_fresh_ids':
      return { ...figure, ceiling: 'http_random', target: CEILING_TARGETS.credits };
    default:
      return { ...figure, ceiling: 'http_random' };
  }
}

function printSummary(report: Record<string, unknown>): void {
  console.log('\n================ summary ================');
  const load = (report.load ?? []) as Array<Record<string, any>>;
  for (const r of load) console.log(loadLine(r));
  const rt = report.round_trips as Record<string, { round_trips: number }> | undefined;
  for (const [name, r] of Object.entries(rt ?? {})) console.log(`${name.padEnd(40)} ${r.round_trips} Postgres round trips per request`);
  const st = report.statements as Record<string, any> | undefined;
  if (st) {
    for (const k of ['EXCEL', 'PDF']) {
      const s = st[k];
      if (s) {
        console.log(
          `statement ${k.padEnd(6)} ${st.rows} rows: ${s.seconds} s, ${s.rows_per_second} rows/s (${s.rows_per_server_cpu_second} per server CPU-second), ${s.bytes} bytes, peak server RSS ${s.server_peak_rss_mb} MB (${s.server_rss_mb_before} MB before)`,
        );
      }
    }
  }
  const ledger = report.ledger as Record<string, any> | undefined;
  if (ledger) console.log(`ledger:verify ok=${ledger.ok}`);
  printAgainstCeiling(report, load.map(againstWhat));
  console.log(`total ${report.total_seconds} s`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
