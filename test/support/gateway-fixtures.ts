import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo, createServer as createNetServer, Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { ClientServicesService } from '../../src/client-services/client-services.service';
import { Money } from '../../src/common/money';
import { OutboxWorkers } from '../../src/infra/queue/outbox-workers';
import { OutboxRelay } from '../../src/infra/queue/outbox-relay.service';
import { SETTLE_PAYMENT_KEY, TOPICS } from '../../src/infra/queue/queues';
import { citusWorkers, distributeTestDatabase, dropCitusDatabases, prepareCitusDatabase } from './citus-cluster';
import { createCheckedApp } from './openapi-contract';
import { dropTestDatabase, ledgerViolations, PG_CONNECT_TIMEOUT_MS } from './test-databases';
import { createTenant, dataSource, TestTenant } from './test-app';
import { createWallet } from './wallet-fixtures';

/**
 * Helpers for the gateway tests: a merchant with API keys, a client service settling into a KES wallet and
 * callback settings; a local HTTP receiver playing the merchant's callback endpoint; a redis-server of the test's
 * own (so tests that stop Redis, or that run workers, never touch the shared one); and polling with a deadline.
 */

export const ROOT = join(__dirname, '..', '..');
export const MAIN_JS = join(ROOT, 'dist', 'src', 'main.js');
export const CLI_JS = join(ROOT, 'dist', 'src', 'admin', 'cli.js');

/** Polls `probe` until it returns a value other than undefined/false/null, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as T;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs the closers at once and waits for every one, so that one failing or slow part leaves none of the others
 * open after the test file; the first failure is thrown once all have finished.
 */
export async function closeTogether(...closers: Array<() => Promise<unknown> | unknown>): Promise<void> {
  const results = await Promise.allSettled(closers.map(async (close) => close()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Closes an HTTP server of a test: stops listening first, then ends every connection, idle keep-alive ones included,
 * so that neither a client nor a connection opened meanwhile keeps the close waiting. Nothing to do when it is not
 * listening (never started, or closed already).
 */
export async function closeServer(server: Server | undefined): Promise<void> {
  if (!server?.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, '127.0.0.1');
  });
}

/** A redis-server of the test's own, on a free port, keeping nothing on disk; it can be stopped and restarted. */
export interface OwnRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL: a crash, not a clean shutdown) and waits until the port is closed. */
  stop(): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  start(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const redis: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await waitFor(`redis-server on port ${port}`, () => portAnswers(port), 10_000);
    },
    async stop() {
      const running = child;
      child = null;
      // A server that has exited (by a signal too) emits no more 'exit' to wait for.
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
      await waitFor(`port ${port} to close`, async () => !(await portAnswers(port)), 5000);
    },
  };
  await redis.start();
  return redis;
}

export interface ReceivedCallback {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
  at: number;
}

/**
 * The merchant's callback endpoint. Each path can be told to answer 500 a number of times (or always) before
 * answering 200 with the acknowledgement fields of the collection document.
 */
export class MerchantReceiver {
  readonly received: ReceivedCallback[] = [];
  private readonly failures = new Map<string, number>();
  private server!: Server;
  private port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(rawBody);
        } catch {
          body = {};
        }
        const path = req.url ?? '/';
        this.received.push({
          path,
          method: req.method ?? '',
          headers: req.headers,
          rawBody,
          body,
          at: Date.now(),
        });
        const left = this.failures.get(path) ?? 0;
        if (left !== 0) {
          if (left > 0) this.failures.set(path, left - 1);
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"merchant down"}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            charge_request_id: String(body.charge_request_id ?? ''),
            acknowledgement_code: '900',
            acknowledgement_description: `received ${String(body.external_reference ?? '')}`,
            payment_id: String(body.payment_id ?? ''),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** A fresh callback URL on this receiver. */
  url(path = `/cb/${randomUUID()}`): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The path answers 500 `times` times (Infinity: always), then 200. */
  failFor(url: string, times: number): void {
    this.failures.set(new URL(url).pathname, times === Infinity ? -1 : times);
  }

  at(url: string): ReceivedCallback[] {
    const path = new URL(url).pathname;
    return this.received.filter((r) => r.path === path);
  }

  forReference(reference: string): ReceivedCallback[] {
    return this.received.filter((r) => r.body.external_reference === reference);
  }

  async close(): Promise<void> {
    await closeServer(this.server);
  }
}

export interface GatewayMerchant {
  tenant: TestTenant;
  clientId: string;
  clientCode: string;
  serviceCode: string;
  settlementAccountNumber: string;
  settlementAccountId: string;
  consumerKey: string;
  consumerSecret: string;
  token: string;
  signingSecret: string;
  callbackUsername: string;
  callbackPassword: string;
  /** The client's configured collection callback URL (notify_client), when one was set. */
  clientCallbackUrl: string | null;
}

/**
 * A client service of the tenant (fixed fee 10, 1 to 1,000,000, unless overridden) whose settlement wallet, in
 * `currency`, is a new wallet of its own: for the gateway, the service's settlement account and float.
 */
export async function addPayingService(
  app: NestFastifyApplication,
  tenant: TestTenant,
  options: { name: string; walletName: string; currency: string; serviceOverrides?: Record<string, unknown> },
): Promise<{ serviceCode: string; wallet: Awaited<ReturnType<typeof createWallet>> }> {
  const service = await request(app.getHttpServer())
    .post('/api/v1/client-services')
    .set('authorization', tenant.auth)
    .send({
      client_code: tenant.clientCode,
      client_service_name: options.name,
      service_code: 'CUSTOM_SERVICE',
      has_transaction_fee: true,
      transaction_fee_type: 'FIXED',
      transaction_fee: 10,
      minimum_transaction_amount: 1,
      maximum_transaction_amount: 1_000_000,
      is_active: 1,
      ...options.serviceOverrides,
    });
  if (service.status !== 201) throw new Error(`client service create failed: ${service.status} ${JSON.stringify(service.body)}`);
  const serviceCode = service.body.client_service_code as string;
  const wallet = await createWallet(app, tenant, { account_name: options.walletName, currency: options.currency });
  await app.get(ClientServicesService).setSettlementWallet(dataSource(app).manager, tenant.clientId, serviceCode, wallet.account_id);
  return { serviceCode, wallet };
}

/**
 * A merchant ready to collect: wallet user, client service (FIXED fee 10 unless told otherwise) settling into a
 * fresh wallet in `currency` (KES unless told otherwise), a gateway API key and token, callback settings, and its
 * current signing secret.
 */
export async function createGatewayMerchant(
  app: NestFastifyApplication,
  options: {
    serviceOverrides?: Record<string, unknown>;
    clientCallbackUrl?: string;
    currency?: string;
  } = {},
): Promise<GatewayMerchant> {
  const tenant = await createTenant(app);
  const { serviceCode, wallet } = await addPayingService(app, tenant, {
    name: 'Collections',
    walletName: 'Settlement wallet',
    currency: options.currency ?? 'KES',
    serviceOverrides: options.serviceOverrides,
  });

  const callbackUsername = `cb-${tenant.clientCode.toLowerCase()}`;
  const callbackPassword = `pw-${randomUUID()}`;
  const settings = app.get(CallbackSettingsService);
  await settings.setEndpoint(tenant.clientId, 'collections', {
    url: options.clientCallbackUrl ?? 'https://merchant.invalid/never-used',
    username: callbackUsername,
    password: callbackPassword,
  });
  const signingSecret = await settings.rotateSigningSecret(tenant.clientId);
  const keys = await app.get(ApiKeysService).issue(tenant.clientId);
  const auth = await request(app.getHttpServer()).post('/v1/auth').send(keys);
  if (auth.status !== 200) throw new Error(`gateway auth failed: ${auth.status} ${JSON.stringify(auth.body)}`);
  return {
    tenant,
    clientId: tenant.clientId,
    clientCode: tenant.clientCode,
    serviceCode,
    settlementAccountNumber: wallet.account_number,
    settlementAccountId: wallet.account_id,
    consumerKey: keys.consumer_key,
    consumerSecret: keys.consumer_secret,
    token: auth.body.access_token,
    signingSecret,
    callbackUsername,
    callbackPassword,
    clientCallbackUrl: options.clientCallbackUrl ?? null,
  };
}

/** The client's valid signing secrets (newest first), as callback delivery reads them. */
export async function signingSecretsOf(app: NestFastifyApplication, clientId: string): Promise<string[] | undefined> {
  return (await app.get(CallbackSettingsService).deliverySettingsOf([clientId])).get(clientId)?.signingSecrets;
}

/** A complete, valid charge request of the merchant; the payer number decides the sandbox outcome. */
export function chargeBody(merchant: GatewayMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    external_reference: `ext-${randomUUID()}`,
    client_code: merchant.clientCode,
    origin_channel_code: 'API',
    originator_msisdn: '254711000111',
    payer_msisdn: '254712345678',
    payer_name: 'Jane Payer',
    payer_email: 'jane.payer@example.com',
    service_code: merchant.serviceCode,
    account_number: 'INV-ACC-1',
    invoice_number: '',
    currency_code: 'KES',
    country_code: 'KEN',
    amount: '100',
    add_transaction_charge: false,
    transaction_charge: '0',
    payment_method_code: 'MMONEY_KEN',
    extra_data: { order: 'A-1', nested: { ok: true } },
    description: 'Order A-1',
    notify_client: false,
    notify_originator: false,
    callback_url: 'https://merchant.invalid/callback',
    ...overrides,
  };
}

/** Gateway requests with the merchant's token in x-access-token. */
/** POSTs a JSON body as the merchant to an api process at `apiUrl`: its status and its JSON answer. */
export async function postAsMerchant(
  apiUrl: string,
  token: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${apiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-token': token },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export function gateway(app: NestFastifyApplication | string, token?: string) {
  const agent = request(typeof app === 'string' ? app : app.getHttpServer());
  const withToken = <T extends request.Test>(test: T) => (token ? test.set('x-access-token', token) : test);
  return {
    post: (path: string) => withToken(agent.post(path)),
    get: (path: string) => withToken(agent.get(path)),
  };
}

export async function paymentRow(
  app: NestFastifyApplication,
  clientId: string,
  externalReference: string,
): Promise<Record<string, any> | undefined> {
  const [row] = await dataSource(app).query(`SELECT * FROM payments WHERE client_id = $1 AND external_reference = $2`, [
    clientId,
    externalReference,
  ]);
  return row;
}

export async function paymentCount(app: NestFastifyApplication, clientId: string): Promise<number> {
  const [row] = await dataSource(app).query(`SELECT count(*)::int AS n FROM payments WHERE client_id = $1`, [clientId]);
  return row.n;
}

/** Polls the status endpoint until the payment has the given payment_status. */
export async function waitForPaymentStatus(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  chargeRequestId: number | string,
  status: number,
  timeoutMs = 15_000,
): Promise<Record<string, unknown>> {
  return waitFor(
    `payment ${chargeRequestId} to reach ${status}`,
    async () => {
      const res = await gateway(app, merchant.token).get(`/v1/transaction/${chargeRequestId}/status`);
      return res.status === 200 && res.body.payment_status === String(status) ? (res.body as Record<string, unknown>) : undefined;
    },
    timeoutMs,
  );
}

/** The merchant's delivery log of one reference (GET /v1/callbacks). */
export async function callbackLog(app: NestFastifyApplication, merchant: GatewayMerchant, reference: string) {
  const res = await gateway(app, merchant.token).get(`/v1/callbacks?reference=${encodeURIComponent(reference)}`);
  if (res.status !== 200) throw new Error(`callback log: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as {
    reference: string;
    deliveries: Array<Record<string, any>>;
  };
}

/**
 * The delivery log once every delivery of the reference is final (DELIVERED or FAILED): the receiver sees a
 * callback a moment before its outcome is recorded.
 */
export async function finishedCallbackLog(app: NestFastifyApplication, merchant: GatewayMerchant, reference: string, deliveries = 1) {
  return waitFor(`the ${deliveries} deliveries of ${reference} to finish`, async () => {
    const log = await callbackLog(app, merchant, reference);
    return log.deliveries.length === deliveries && log.deliveries.every((d) => d.status !== 'PENDING') ? log : undefined;
  });
}

/**
 * Stops the app's BullMQ workers of the outbox topics (the jobs under way finish first), so that a test can stage what
 * a worker would otherwise race it to; the returned function starts them again.
 */
export async function stopClaiming(app: NestFastifyApplication): Promise<() => void> {
  const workers = app.get(OutboxWorkers);
  await workers.onApplicationShutdown();
  return () => workers.onApplicationBootstrap();
}

/**
 * Stops the app's outbox relay after its current round, so that no
 * outbox row reaches the worker until the test says; the returned function starts relaying again.
 */
export async function stopRelaying(app: NestFastifyApplication): Promise<() => void> {
  const relay = app.get(OutboxRelay);
  await relay.onApplicationShutdown();
  return () => relay.onApplicationBootstrap();
}

/** True once the settlement job of the payment has run to completion (its outbox row is marked done). */
export async function settlementJobDone(app: NestFastifyApplication, paymentId: number | string): Promise<boolean> {
  const rows = await dataSource(app).query(`SELECT done_at FROM outbox WHERE topic = $1 AND payload->>$2 = $3`, [
    TOPICS.settlePayment,
    SETTLE_PAYMENT_KEY,
    String(paymentId),
  ]);
  return rows.length > 0 && rows.every((r: { done_at: Date | null }) => r.done_at !== null);
}

export async function ledgerBalance(app: NestFastifyApplication, accountNumber: string): Promise<string> {
  const [row] = await dataSource(app).query(`SELECT balance FROM ledger_accounts WHERE account_number = $1`, [accountNumber]);
  return new Money(row.balance).toFixed(4);
}

export async function systemBalance(app: NestFastifyApplication, clientId: string, kind: string, currency = 'KES'): Promise<string> {
  const [row] = await dataSource(app).query(`SELECT balance FROM ledger_accounts WHERE client_id = $1 AND kind = $2 AND currency = $3`, [
    clientId,
    kind,
    currency,
  ]);
  return new Money(row?.balance ?? 0).toFixed(4);
}

/** Sets env vars for an app created in this test file; returns a function restoring the previous values. */
export function withEnv(values: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  return () => {
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/**
 * A database of the test file's own, created on the run's Postgres server and migrated with the compiled
 * migrations (the global set-up has built them). Test files that run workers use one, so that no other file's
 * outbox relay claims their jobs (and no other file's counts leak into theirs). Dropping it first checks the
 * ledger invariants over everything the file wrote.
 */
export interface IsolatedDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createIsolatedDatabase(): Promise<IsolatedDatabase> {
  const runUrl = process.env.DATABASE_URL;
  if (!runUrl) throw new Error('DATABASE_URL is not set');
  const serverUrl = process.env.TEST_SERVER_DATABASE_URL ?? runUrl;
  const name = `${process.env.TEST_DATABASE_NAME ?? 'paygate_test'}_f${randomBytes(4).toString('hex')}`.slice(0, 63);
  const admin = new Client({ connectionString: serverUrl, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  // On a Citus cluster (TEST_CITUS_WORKERS) a file's own database is distributed as the run's is.
  const onCitus = citusWorkers().length > 0;
  if (onCitus) await prepareCitusDatabase(serverUrl, name);
  const url = new URL(runUrl);
  url.pathname = `/${name}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { migrate } = require(join(ROOT, 'scripts', 'migrate.js'));
  await migrate(url.toString());
  if (onCitus) await distributeTestDatabase(url.toString());
  return {
    url: url.toString(),
    name,
    async drop() {
      try {
        const violations = await ledgerViolations(url.toString());
        if (violations.length > 0) throw new Error(`ledger invariants violated in ${name}:\n${violations.join('\n')}`);
      } finally {
        // Dropped even when the check failed, so no database outlives its file.
        await dropTestDatabase(serverUrl, name);
        if (onCitus) await dropCitusDatabases(serverUrl, name);
      }
    },
  };
}

/**
 * An isolated sandbox: its own database, its own redis-server, a merchant receiver, and the app as `sandbox`
 * (api + outbox relay + workers in this process) with the given environment.
 */
export interface IsolatedSandbox {
  app: NestFastifyApplication;
  db: IsolatedDatabase;
  redis: OwnRedis;
  receiver: MerchantReceiver;
  close(): Promise<void>;
}

/** How long a test's app may take to close before its database and Redis are closed under it. */
const APP_CLOSE_BOUND_MS = 30_000;

/**
 * Closes the app, waiting at most `boundMs`: past it, a warning names the bound and the caller goes on to close the
 * app's database and Redis, which ends whatever still held the app open, so the file's hooks stay within their time.
 */
async function closeAppWithin(app: NestFastifyApplication, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'bound'>((resolve) => (timer = setTimeout(() => resolve('bound'), boundMs)));
  const closing = app.close().then(() => 'closed' as const);
  const first = await Promise.race([closing, bound]).finally(() => clearTimeout(timer));
  if (first === 'bound') {
    const file = expect.getState().testPath ?? 'a test file';
    process.stderr.write(`WARNING: a test app of ${file} took over ${boundMs} ms to close; its database and Redis are closed under it\n`);
    closing.catch(() => undefined);
  }
}

export async function startIsolatedSandbox(
  env: Record<string, string> = {},
  role: 'sandbox' | 'api' = 'sandbox',
  create: (role: 'sandbox' | 'api') => Promise<NestFastifyApplication> = createCheckedApp,
): Promise<IsolatedSandbox> {
  const redis = await startOwnRedis();
  const db = await createIsolatedDatabase();
  const restoreEnv = withEnv({
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    ...env,
  });
  const receiver = await new MerchantReceiver().start();
  // The app needs Redis and its database until it has closed; the receiver it may still be calling need not wait.
  const closeBehindApp = async () => {
    restoreEnv();
    await closeTogether(
      () => redis.stop(),
      () => db.drop(),
    );
  };
  let app: NestFastifyApplication;
  try {
    app = await create(role);
  } catch (error) {
    await closeTogether(() => receiver.close(), closeBehindApp);
    throw error;
  }
  return {
    app,
    db,
    redis,
    receiver,
    async close() {
      try {
        await closeTogether(
          () => closeAppWithin(app, APP_CLOSE_BOUND_MS),
          () => receiver.close(),
        );
      } finally {
        await closeBehindApp();
      }
    },
  };
}
