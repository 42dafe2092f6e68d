import { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { BenchDatabase, createBenchDatabase, dropBenchDatabase, newBenchDatabase } from './database';
import { CONNECTIONS, DURATION, freePort, log, SERVER_URL, sleep } from './environment';
import { driveLoad } from './load';
import { machineFacts, pgRoundTripCost } from './machine';
import { Meter, Processes } from './meter';
import { OwnRedis, runCli, startOwnRedis, startRole, stopChild, waitForLive } from './processes';
import { summariseProfile } from './profiles';
import { Receiver } from './receiver';

/** The seeded merchant: an API key, a KES service with a FIXED fee of 10 whose settlement wallet is the float. */
export interface Merchant {
  clientId: string;
  clientCode: string;
  serviceCode: string;
  serviceId: string;
  settlementAccountNumber: string;
  consumerKey: string;
  consumerSecret: string;
  token: string;
  /** The seeded wallet-service user (POST /api/v1/auth/login). */
  walletUsername: string;
  walletPassword: string;
}

/**
 * What a gateway benchmark runs in: a redis-server of its own (or BENCH_REDIS_URL), a migrated database of its own,
 * a callback receiver, a merchant seeded with `admin seed` whose callbacks of every kind go to the receiver, the API
 * (`node dist/src/main.js api`, `apis` of them on ports of their own, default one) and a gateway token; workers when
 * asked. close() undoes whatever start() got to.
 */
export class GatewayBench {
  readonly admin = new Client({ connectionString: SERVER_URL });
  readonly database: BenchDatabase;
  readonly receiver = new Receiver();
  db: Client | null = null;
  redis: Redis | null = null;
  redisUrl = '';
  /** The first API's address (what autocannon phases drive). */
  base = '';
  /** Every API's address, in start order. */
  bases: string[] = [];
  merchant!: Merchant;
  procs!: Processes;
  meter!: Meter;
  /** The environment of every child (API, workers, CLI). */
  env: Record<string, string> = {};
  private ownRedis: OwnRedis | null = null;
  private readonly children: ChildProcess[] = [];
  private readonly profileDirs: Array<{ label: string; dir: string }> = [];
  private generation = 0;

  constructor(
    prefix: string,
    private readonly options: { settleDelayMs: number; profile: boolean; apis?: number; facts?: Record<string, unknown> },
  ) {
    this.database = newBenchDatabase(prefix);
  }

  /** Everything up to a signed-in merchant and running APIs; machine facts go into report.machine. */
  async start(report: Record<string, unknown>): Promise<void> {
    await this.admin.connect();
    this.ownRedis = process.env.BENCH_REDIS_URL ? null : await startOwnRedis();
    this.redisUrl = process.env.BENCH_REDIS_URL ?? this.ownRedis!.url;
    this.redis = new Redis(this.redisUrl, { maxRetriesPerRequest: 1 });
    const redisVersion = /redis_version:(\S+)/.exec(await this.redis.info('server'))?.[1];
    report.machine = await machineFacts(this.admin, {
      redis: `${redisVersion} (${this.ownRedis ? `own redis-server, pid ${this.ownRedis.pid}` : 'BENCH_REDIS_URL'})`,
      sandbox_settle_delay_ms: this.options.settleDelayMs,
      api_processes: this.options.apis ?? 1,
      ...this.options.facts,
      postgres_round_trip: await pgRoundTripCost(),
    });
    console.log(JSON.stringify({ machine: report.machine }, null, 2));

    await createBenchDatabase(this.admin, this.database);
    this.db = new Client({ connectionString: this.database.url });
    await this.db.connect();
    this.env = {
      DATABASE_URL: this.database.url,
      REDIS_URL: this.redisUrl,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: String(this.options.settleDelayMs),
    };

    await this.receiver.start();
    log(`callback receiver on ${this.receiver.base}`);
    const t0 = Date.now();
    const r = this.receiver.base;
    const seeded = await this.cli(['seed', '--callback-url', `${r}/cb`, '--callback-username', 'u', '--callback-password', 'p']);
    log(`seeded merchant ${seeded.client_code} (service ${seeded.service_code}) in ${Date.now() - t0} ms`);

    for (let i = 0; i < (this.options.apis ?? 1); i++) this.bases.push(`http://127.0.0.1:${await freePort()}`);
    this.base = this.bases[0];
    this.procs = { api: null as unknown as ChildProcess, apis: [], workers: [], redisPid: this.ownRedis?.pid ?? null };
    await this.startApis();

    const auth = await postJson(this.base, '/v1/auth', { consumer_key: seeded.consumer_key, consumer_secret: seeded.consumer_secret });
    const [row] = (
      await this.db.query(
        `SELECT c.id AS client_id, s.id AS service_id FROM clients c JOIN client_services s ON s.client_id = c.id WHERE c.code = $1 AND s.code = $2`,
        [seeded.client_code, seeded.service_code],
      )
    ).rows;
    this.merchant = {
      clientId: row.client_id,
      clientCode: seeded.client_code,
      serviceCode: seeded.service_code,
      serviceId: row.service_id,
      settlementAccountNumber: seeded.settlement_account_number,
      consumerKey: seeded.consumer_key,
      consumerSecret: seeded.consumer_secret,
      token: auth.access_token,
      walletUsername: seeded.username,
      walletPassword: seeded.password,
    };
    this.meter = new Meter(this.db, this.database.name, this.procs, this.redis);
  }

  /** One API per address of `bases`, with the bench's environment; waits until every one is live. */
  private async startApis(): Promise<void> {
    const suffix = this.generation > 0 ? `_${this.generation}` : '';
    for (const [i, base] of this.bases.entries()) {
      const label = this.bases.length > 1 ? `api${i + 1}${suffix}` : `api${suffix}`;
      const api = startRole('api', { env: { ...this.env, PORT: new URL(base).port }, profileDir: this.profileDir(label) });
      this.children.push(api);
      this.procs.apis.push(api);
    }
    this.procs.api = this.procs.apis[0];
    for (const [i, base] of this.bases.entries()) {
      await waitForLive(base, this.procs.apis[i]);
      log(`API child pid ${this.procs.apis[i].pid} listening on ${base}`);
    }
  }

  /** `node dist/src/admin/cli.js <args> --json` against the bench's database; its JSON output. */
  async cli(args: string[]): Promise<Record<string, string>> {
    const { code, stdout, stderr } = await runCli([...args, '--json'], this.env);
    if (code !== 0) throw new Error(`cli ${args[0]} exited ${code}: ${stderr.trim()}`);
    return JSON.parse(stdout);
  }

  /** BENCH_PROFILE=1: a directory the process writes its V8 CPU profile into at exit, summarised by close(). */
  profileDir(label: string): string | null {
    if (!this.options.profile) return null;
    const dir = mkdtempSync(join(tmpdir(), `paygate-bench-prof-${label}-`));
    this.profileDirs.push({ label, dir });
    return dir;
  }

  startWorkers(count: number): void {
    const suffix = this.generation > 0 ? `_${this.generation}` : '';
    for (let i = 0; i < count; i++) {
      const worker = startRole('worker', { env: this.env, profileDir: this.profileDir(`worker${i + 1}${suffix}`) });
      this.children.push(worker);
      this.procs.workers.push(worker);
    }
    log(`started ${count} worker(s): pids ${this.procs.workers.map((w) => w.pid).join(', ')}`);
  }

  /**
   * Stops the APIs and workers and starts them again (same ports, `workers` workers) with `env` added to the
   * children's environment, e.g. another SANDBOX_SETTLE_DELAY_MS. Meter snapshots taken before span other
   * processes: take new ones.
   */
  async restart(env: Record<string, string>, workers: number): Promise<void> {
    await this.stopChildren();
    this.env = { ...this.env, ...env };
    this.generation++;
    this.procs.apis.splice(0);
    this.procs.workers.splice(0);
    await this.startApis();
    this.startWorkers(workers);
  }

  /**
   * autocannon POSTs to a gateway route with the merchant's token and a fresh `[<id>]` per request, measured
   * with the per-request costs of every process (Meter).
   */
  async drive(name: string, unit: string, path: string, body: string, duration = DURATION) {
    const before = await this.meter.snapshot();
    const result = await driveLoad({
      name,
      base: this.base,
      serverPid: this.procs.api.pid!,
      db: this.db!,
      dbName: this.database.name,
      connections: CONNECTIONS,
      duration,
      idReplacement: true,
      requests: [{ method: 'POST', path, headers: { 'content-type': 'application/json', 'x-access-token': this.merchant.token }, body }],
    });
    const after = await this.meter.snapshot();
    const ok = Number((result.status_codes as Record<string, number>)['200'] ?? 0);
    await this.untilDatabaseIdle();
    return { ...result, per_request: this.meter.costs(before, after, ok, unit) };
  }

  /**
   * Waits until no backend of the database is busy for 0.5 s: autocannon abandons the requests in flight when a
   * phase ends, and the API still commits them, so the next phase (or a backlog count) starts from a settled state.
   */
  async untilDatabaseIdle(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quietSince: number | null = null;
    while (Date.now() < deadline) {
      const [{ busy }] = (
        await this.db!.query(
          `SELECT count(*)::int AS busy FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state <> 'idle'`,
          [this.database.name],
        )
      ).rows;
      if (busy > 0) quietSince = null;
      else if (quietSince === null) quietSince = Date.now();
      else if (Date.now() - quietSince >= 500) return;
      await sleep(100);
    }
    log(`the database was still busy after ${timeoutMs / 1000} s`);
  }

  /** Stops the API and the workers (round trips are then counted with processes of their own). */
  async stopChildren(): Promise<void> {
    for (const child of this.children.splice(0)) await stopChild(child);
  }

  /** `ledger:verify --json`: the invariants (a)–(d) over everything the run wrote. */
  async ledgerVerify() {
    const t0 = Date.now();
    const { code, stdout, stderr } = await runCli(['ledger:verify', '--json'], this.env);
    const output = stdout.trim() ? JSON.parse(stdout) : null;
    return { exit_code: code, seconds: (Date.now() - t0) / 1000, ...(output ?? {}), ...(stderr.trim() ? { stderr: stderr.trim() } : {}) };
  }

  async close(report: Record<string, unknown>): Promise<void> {
    await this.stopChildren();
    for (const { label, dir } of this.profileDirs) report[`${label}_profile`] = summariseProfile(dir, `${label}_profile`);
    this.redis?.disconnect();
    await this.db?.end().catch(() => undefined);
    await this.receiver.close();
    await dropBenchDatabase(this.admin, this.database.name);
    await this.admin.end();
    await this.ownRedis?.stop();
  }
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
