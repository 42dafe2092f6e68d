import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../../src/http-app';
import { Child, killChild, startChild, stopChild } from './child-processes';
import {
  closeTogether,
  createIsolatedDatabase,
  freePort,
  IsolatedDatabase,
  MerchantReceiver,
  OwnRedis,
  startOwnRedis,
  waitFor,
  withEnv,
} from './gateway-fixtures';
import { dataSource } from './test-app';

export interface ClusterOptions {
  apis?: number;
  workers: number;
  /** Variables on top of the cluster's, given the first api's URL (where operators post their callbacks). */
  env?: (apiUrl: string) => Record<string, string>;
}

/**
 * Compiled api and worker processes (`node dist/src/main.js <role>`) on a database and a redis-server of their own,
 * with a merchant receiver. An in-test application on the same database (as `api`: no relay, no worker) makes the
 * merchants and reads the tables. A process killed (SIGKILL) can be started again in its place, an api on its port.
 */
export class ProcessCluster {
  readonly receiver = new MerchantReceiver();
  readonly apis: Child[] = [];
  readonly workers: Child[] = [];
  apiUrls: string[] = [];
  env: NodeJS.ProcessEnv = {};
  setup!: NestFastifyApplication;
  db!: IsolatedDatabase;
  /** Every process started, killed ones included, for diagnostics. */
  private readonly started: Child[] = [];
  private redis!: OwnRedis;
  private restoreEnv: () => void = () => undefined;

  get apiUrl(): string {
    return this.apiUrls[0];
  }

  get redisUrl(): string {
    return this.redis.url;
  }

  get processes(): Child[] {
    return this.started;
  }

  async launch({ apis = 1, workers, env }: ClusterOptions): Promise<this> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    await this.receiver.start();
    this.redis = await startOwnRedis();
    this.db = await createIsolatedDatabase();
    this.restoreEnv = withEnv({ DATABASE_URL: this.db.url, REDIS_URL: this.redis.url });
    this.setup = await createHttpApp('api');
    for (let i = 0; i < apis; i += 1) this.apiUrls.push(`http://127.0.0.1:${await freePort()}`);
    this.env = {
      ...process.env,
      DATABASE_URL: this.db.url,
      REDIS_URL: this.redis.url,
      APP_ENV: 'sandbox',
      LOG_LEVEL: 'info', // 'worker started' is an info line
      DB_POOL_SIZE: '8',
      ...env?.(this.apiUrl),
    };
    delete this.env.PORT;
    for (let i = 0; i < apis; i += 1) this.startApi(i);
    for (let i = 0; i < workers; i += 1) this.startWorker();
    await this.ready();
    return this;
  }

  /** Starts the api process serving apiUrls[index], in place of the one there before. */
  startApi(index: number): Child {
    const url = this.apiUrls[index];
    const api = startChild(`api-${index + 1}`, ['api'], { ...this.env, PORT: new URL(url).port, PUBLIC_BASE_URL: url });
    this.apis[index] = api;
    this.started.push(api);
    return api;
  }

  startWorker(): Child {
    const number = this.started.filter((child) => child.name.startsWith('worker-')).length + 1;
    const worker = startChild(`worker-${number}`, ['worker'], this.env);
    this.workers.push(worker);
    this.started.push(worker);
    return worker;
  }

  /**
   * Kills the process (SIGKILL) and starts another in its place: an api on the same port, a worker added. `whileDead`
   * runs between the two.
   */
  async crashAndRestart(child: Child, whileDead?: () => Promise<void>): Promise<Child> {
    await killChild(child);
    await whileDead?.();
    const api = this.apis.indexOf(child);
    if (api >= 0) return this.startApi(api);
    this.workers.splice(this.workers.indexOf(child), 1);
    return this.startWorker();
  }

  /** Waits until every api answers and every worker has started. */
  async ready(timeoutMs = 60_000): Promise<void> {
    await Promise.all([
      ...this.apiUrls.map((url) =>
        waitFor(
          `the api at ${url} to serve`,
          async () => (await fetch(`${url}/health/live`).catch(() => null))?.status === 200,
          timeoutMs,
          200,
        ),
      ),
      waitFor('the workers to start', () => this.workers.every(workerStarted), timeoutMs, 200),
    ]);
  }

  query<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return dataSource(this.setup).query(sql, params);
  }

  /** Stops the processes, the in-test app and the receiver at once, then Redis and the database they all used. */
  async close(): Promise<void> {
    try {
      await closeTogether(
        ...this.started.map((child) => () => stopChild(child)),
        () => this.setup?.close(),
        () => this.receiver.close(),
      );
    } finally {
      this.restoreEnv();
      await closeTogether(
        () => this.redis?.stop(),
        () => this.db?.drop(),
      );
    }
  }
}

export function workerStarted(worker: Child): boolean {
  return worker.output.join('').includes('worker started');
}
