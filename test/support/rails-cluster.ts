import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../../src/http-app';
import { AfricasTalkingStub } from './africastalking-stub';
import { AirtimeMerchant, createAirtimeMerchant } from './airtime-fixtures';
import { Child, startChild, stopChild } from './child-processes';
import { DarajaStub, STUB_CREDENTIALS } from './daraja-stub';
import { createPayoutMerchant } from './disbursement-fixtures';
import {
  createIsolatedDatabase,
  freePort,
  GatewayMerchant,
  IsolatedDatabase,
  MerchantReceiver,
  OwnRedis,
  startOwnRedis,
  waitFor,
  withEnv,
} from './gateway-fixtures';
import { JengaStub } from './jenga-stub';
import { dataSource } from './test-app';

/**
 * Compiled api and worker processes on a database and Redis of their own, with M-Pesa played by the Daraja stub and
 * the bank by the Jenga stub (and, when asked, airtime by the Africa's Talking stub): payouts, charges and airtime are
 * accepted by the api and sent by the workers, as in production. An in-test application on the same database makes
 * the merchants and reads the tables.
 */
export class RailsCluster {
  readonly daraja = new DarajaStub();
  readonly jenga = new JengaStub();
  readonly africastalking = new AfricasTalkingStub();
  readonly receiver = new MerchantReceiver();
  readonly workers: Child[] = [];
  merchant!: GatewayMerchant;
  /** A merchant of its own for airtime (its float moves by airtime alone), set when started with `airtime`. */
  airtimeMerchant?: AirtimeMerchant;
  apiUrl = '';
  env: NodeJS.ProcessEnv = {};
  private api!: Child;
  /** The in-test application (its services act as an operator's admin commands would). */
  setup!: NestFastifyApplication;
  private redis!: OwnRedis;
  private db!: IsolatedDatabase;
  private restoreEnv: () => void = () => undefined;

  /**
   * Starts everything, with `workers` worker processes and the variables in `env` on top of the rails'; with
   * `airtime`, airtime goes through Africa's Talking (its stub) and an airtime merchant is made.
   */
  async start(workers: number, env: Record<string, string> = {}, options: { airtime?: boolean } = {}): Promise<this> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    await Promise.all([this.daraja.start(), this.jenga.start(), this.africastalking.start(), this.receiver.start()]);
    this.redis = await startOwnRedis();
    this.db = await createIsolatedDatabase();
    this.restoreEnv = withEnv({ DATABASE_URL: this.db.url, REDIS_URL: this.redis.url });
    this.setup = await createHttpApp('api');
    this.merchant = await createPayoutMerchant(this.setup, { float: '1000000' });
    if (options.airtime) this.airtimeMerchant = await createAirtimeMerchant(this.setup, this.receiver);
    const port = await freePort();
    this.apiUrl = `http://127.0.0.1:${port}`;
    this.africastalking.statusCallbackUrl = `${this.apiUrl}/rails/africastalking/airtime/status`;
    this.env = {
      ...process.env,
      DATABASE_URL: this.db.url,
      REDIS_URL: this.redis.url,
      APP_ENV: 'sandbox',
      RAIL_MOBILE_MONEY: 'mpesa',
      ...STUB_CREDENTIALS,
      MPESA_BASE_URL: this.daraja.baseUrl,
      MPESA_CALLBACK_BASE_URL: this.apiUrl,
      MPESA_ALLOWED_IPS: '127.0.0.1',
      MPESA_TIMEOUT_MS: '2000',
      ...this.jenga.env(),
      JENGA_TIMEOUT_MS: '2000',
      ...(options.airtime ? { ...this.africastalking.env(), AFRICASTALKING_TIMEOUT_MS: '2000' } : {}),
      RAIL_RECONCILE_AFTER_MS: '500',
      PAYOUT_RECONCILE_AFTER_MS: '500',
      OUTBOX_LOST_JOB_AFTER_MS: '2000',
      CALLBACK_RETRY_DELAYS_MS: '300,600,900,1200',
      LOG_LEVEL: 'info', // 'worker started' is an info line
      DB_POOL_SIZE: '8',
      ...env,
    };
    delete this.env.PORT;
    this.api = startChild('api', ['api'], { ...this.env, PORT: String(port), PUBLIC_BASE_URL: this.apiUrl });
    for (let i = 0; i < workers; i += 1) this.startWorker();
    await waitFor(
      'the api to serve',
      async () => (await fetch(`${this.apiUrl}/health/live`).catch(() => null))?.status === 200,
      60_000,
      200,
    );
    await waitFor('the workers to start', () => this.workers.every((worker) => started(worker)), 60_000, 200);
    return this;
  }

  /** Every process started, for diagnostics. */
  get processes(): Child[] {
    return [this.api, ...this.workers].filter(Boolean);
  }

  startWorker(): Child {
    const worker = startChild(`worker-${this.workers.length + 1}`, ['worker'], this.env);
    this.workers.push(worker);
    return worker;
  }

  query<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return dataSource(this.setup).query(sql, params);
  }

  /** POSTs to the api as the merchant (or another one). */
  post(path: string, body: unknown, merchant: GatewayMerchant = this.merchant): Promise<Response> {
    return fetch(`${this.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': merchant.token },
      body: JSON.stringify(body),
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((child) => stopChild(child)));
    await this.setup?.close();
    await this.receiver.close();
    await Promise.all([this.daraja.close(), this.jenga.close(), this.africastalking.close()]);
    await this.redis?.stop();
    this.restoreEnv();
    await this.db?.drop();
  }
}

export function started(worker: Child): boolean {
  return worker.output.join('').includes('worker started');
}
