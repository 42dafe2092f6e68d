import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { createHttpApp } from '../../src/http-app';
import { Child, diagnostics, killChild, startChild, stopChild } from '../support/child-processes';
import {
  chargeBody,
  createGatewayMerchant,
  createIsolatedDatabase,
  gateway,
  GatewayMerchant,
  IsolatedDatabase,
  OwnRedis,
  startOwnRedis,
  waitFor,
  withEnv,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

const CALLBACKS = 12;

/**
 * A merchant endpoint that holds every request until released, so deliveries stay in flight; once released it
 * answers 200 at once. Requests are counted by X-Event-Id.
 */
class HoldingReceiver {
  readonly held = new Map<string, ServerResponse>();
  readonly answered = new Set<string>();
  private holding = true;
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-event-id']);
        if (this.holding) this.held.set(id, res);
        else {
          this.answered.add(id);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  release(): void {
    this.holding = false;
    for (const [id, res] of this.held) {
      if (!res.destroyed && !res.socket?.destroyed) {
        this.answered.add(id);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Issue 11 §2: a worker killed (SIGKILL) while its deliveries are in flight loses no callback. Its leases run out,
 * and the other worker's deliverer claims the deliveries again. Every delivery ends DELIVERED with at least one
 * attempt.
 */
describe('callbacks survive a worker killed mid-delivery', () => {
  let redis: OwnRedis;
  let db: IsolatedDatabase;
  let restoreEnv: () => void;
  let setup: NestFastifyApplication;
  let receiver: HoldingReceiver;
  let merchant: GatewayMerchant;
  const workers: Child[] = [];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    redis = await startOwnRedis();
    db = await createIsolatedDatabase();
    restoreEnv = withEnv({ DATABASE_URL: db.url, REDIS_URL: redis.url });
    receiver = await new HoldingReceiver().start();
    setup = await createHttpApp('api'); // prepares the merchant and takes charges; runs no relay and no worker
    merchant = await createGatewayMerchant(setup);
    env = {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: '50',
      // Many retries: on a loaded machine worker-1's posts may time out (and retry) before it is killed.
      CALLBACK_RETRY_DELAYS_MS: '3000,6000,9000,12000,15000,18000,21000,24000',
      // A lease long enough to outlast the killed worker's posts (the post timeout is half of it), short enough for a test.
      CALLBACK_LEASE_MS: '20000',
      LOG_LEVEL: 'info',
      DB_POOL_SIZE: '5',
    };
    delete env.PORT;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map(stopChild));
    await setup?.close();
    await receiver?.close();
    await redis?.stop();
    restoreEnv?.();
    await db?.drop();
  }, 60_000);

  async function started(child: Child): Promise<void> {
    await waitFor(`${child.name} to start`, () => child.output.join('').includes('worker started'), 60_000, 100);
  }

  it(`${CALLBACKS} callbacks in flight on the killed worker are all delivered by the other`, async () => {
    workers.push(startChild('worker-1', ['worker'], env));
    await started(workers[0]);

    const references: string[] = [];
    for (let i = 0; i < CALLBACKS; i++) {
      const body = chargeBody(merchant, {
        callback_url: `http://127.0.0.1:${receiver.port}/cb/${i}`,
      });
      await gateway(setup, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
      references.push(body.external_reference as string);
    }
    await waitFor('every callback to be in flight on worker-1', () => receiver.held.size === CALLBACKS, 30_000);

    workers.push(startChild('worker-2', ['worker'], env));
    await started(workers[1]);
    await killChild(workers[0]);
    const killedAt = Date.now();
    // The kernel closes a killed process's sockets; the receiver learns it on its next turns of the event loop.
    await waitFor(
      "worker-1's connections to close at the receiver",
      () => [...receiver.held.values()].every((res) => res.destroyed || !res.socket || res.socket.destroyed),
      10_000,
      20,
    );
    receiver.release();
    expect(receiver.answered.size).toBe(0); // worker-1's connections died with it: nothing was acknowledged

    const sql = `SELECT status, attempts FROM callback_deliveries WHERE client_id = $1`;
    try {
      await waitFor(
        'every delivery to be DELIVERED',
        async () => {
          const rows: Array<{ status: string; attempts: number }> = await dataSource(setup).query(sql, [merchant.clientId]);
          return rows.length === CALLBACKS && rows.every((r) => r.status === 'DELIVERED' && r.attempts >= 1);
        },
        60_000,
        250,
      );
    } catch (error) {
      const rows = await dataSource(setup).query(sql, [merchant.clientId]);
      throw new Error(`${(error as Error).message}\n${JSON.stringify(rows)}\n${diagnostics(workers)}`, { cause: error });
    }
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(receiver.answered.size).toBe(CALLBACKS);
    expect(workers[1].process.exitCode).toBeNull();
  }, 180_000);
});
