import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import { createHttpApp } from '../../../src/http-app';
import { ALL_QUEUES } from '../../../src/infra/queue/queues';
import { Child, diagnostics, startChild, stopChild } from '../../support/child-processes';
import { createPayoutMerchant, mobilePayoutBody, PAYOUT_PATHS, statusPath } from '../../support/disbursement-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  createIsolatedDatabase,
  freePort,
  gateway,
  GatewayMerchant,
  IsolatedDatabase,
  MerchantReceiver,
  waitFor,
  withEnv,
} from '../../support/gateway-fixtures';
import { LocalRedisCluster, startRedisCluster } from '../../support/redis-cluster';
import { dataSource } from '../../support/test-app';

const RATE_LIMIT = 20;

/**
 * An `api` and a `worker` process (compiled) on a local three-master Redis Cluster (REDIS_CLUSTER_NODES), with
 * REDIS_URL pointing where nothing listens, so that any client not made for the cluster would fail: a charge
 * settles and calls back, a payout reaches its final status and calls back, the gateway's rate limit refuses the
 * request past it, and afterwards every queue's keys lie in one hash slot under the database's tag.
 */
describe('Redis Cluster: api and worker processes on three masters', () => {
  let cluster: LocalRedisCluster;
  let db: IsolatedDatabase;
  let restoreEnv: () => void;
  let setup: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let api: Child;
  let worker: Child;
  let apiUrl: string;
  let inspector: Cluster;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../../scripts/lib/build').ensureBuilt();
    cluster = await startRedisCluster();
    db = await createIsolatedDatabase();
    const redis = { REDIS_CLUSTER_NODES: cluster.nodes, REDIS_URL: 'redis://127.0.0.1:1' };
    restoreEnv = withEnv({ DATABASE_URL: db.url, ...redis });
    receiver = await new MerchantReceiver().start();
    // Prepares the merchant and reads the database; as `api` it runs no relay and no worker.
    setup = await createHttpApp('api');
    merchant = await createPayoutMerchant(setup);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      ...redis,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: '100',
      CALLBACK_RETRY_DELAYS_MS: '500,1000,1500',
      GATEWAY_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      LOG_LEVEL: 'info',
      DB_POOL_SIZE: '5',
    };
    delete env.PORT;
    worker = startChild('worker', ['worker'], env);
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = startChild('api', ['api'], { ...env, PORT: String(port), PUBLIC_BASE_URL: apiUrl });
    inspector = new Cluster(cluster.ports.map((p) => ({ host: '127.0.0.1', port: p })));
    try {
      // Ready means Postgres answered and Redis answered PING through the cluster client.
      await waitFor(
        'the api process to be ready',
        async () => (await fetch(`${apiUrl}/health/ready`).catch(() => null))?.status === 200,
        60_000,
        200,
      );
      await waitFor('the worker process to start', () => worker.output.join('').includes('worker started'), 60_000, 200);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${diagnostics([api, worker])}`, { cause: error });
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([api, worker].filter(Boolean).map(stopChild));
    inspector?.disconnect();
    await setup?.close();
    await receiver?.close();
    await cluster?.stop();
    restoreEnv?.();
    await db?.drop();
  }, 60_000);

  /** Every key of the cluster, read from each master (a SCAN answers for one node only). */
  async function allKeys(): Promise<string[]> {
    const keys: string[] = [];
    for (const node of inspector.nodes('master')) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
    }
    return keys;
  }

  const slotOf = async (key: string) => Number(await inspector.cluster('KEYSLOT', key));

  it('settles a charge and a payout, and delivers both callbacks, with every Redis client on the cluster', async () => {
    const chargeUrl = receiver.url();
    const charge = chargeBody(merchant, { callback_url: chargeUrl });
    const payout = mobilePayoutBody(merchant, 'ok', { callback_url: receiver.url() });
    const gw = gateway(apiUrl, merchant.token);
    const charged = await gw.post('/v1/mobile-money/charge').send(charge);
    expect(charged.status).toBe(200);
    expect((await gw.post(PAYOUT_PATHS.local).send(payout)).body).toMatchObject({ response_code: 720 });

    try {
      await waitFor(
        'the charge to settle and call back',
        async () => {
          const [row] = await dataSource(setup).query(`SELECT payment_status FROM payments WHERE id = $1`, [
            charged.body.charge_request_id,
          ]);
          return row?.payment_status === 700 && receiver.at(chargeUrl).length > 0;
        },
        60_000,
        200,
      );
      await waitFor(
        'the payout to be paid and call back',
        async () => {
          const status = await gw.get(statusPath(payout.payout_reference as string));
          return status.body.data?.payment_status === 700 && receiver.at(payout.callback_url as string).length > 0;
        },
        60_000,
        200,
      );
      await waitFor(
        'every outbox row to be done',
        async () => (await dataSource(setup).query(`SELECT count(*)::int AS n FROM outbox WHERE done_at IS NULL`))[0].n === 0,
        30_000,
        200,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${diagnostics([api, worker])}`, { cause: error });
    }
    expect(receiver.at(chargeUrl)).toHaveLength(1);
    expect(receiver.at(payout.callback_url as string)).toHaveLength(1);
  }, 150_000);

  it('refuses the gateway request past the rate limit, counted in the cluster', async () => {
    const limited = await createGatewayMerchant(setup);
    const gw = gateway(apiUrl, limited.token);
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMIT; i++) statuses.push((await gw.get(statusPath(`po-unknown-${i}`))).status);
    expect(statuses.slice(0, RATE_LIMIT).filter((s) => s === 429)).toEqual([]);
    expect(statuses[RATE_LIMIT]).toBe(429);

    // The counter and its block, which the one script reads and writes together, share a slot.
    const keys = (await allKeys()).filter((k) => k.startsWith(`throttle:${db.name}:gateway:`));
    const blocked = keys.filter((k) => k.endsWith(':blocked'));
    expect(blocked).toHaveLength(1);
    const counter = blocked[0].slice(0, -':blocked'.length);
    expect(keys).toContain(counter);
    expect(await slotOf(counter)).toBe(await slotOf(blocked[0]));
  }, 60_000);

  it("keeps each queue's keys in one slot of its own, under the database's hash tag", async () => {
    const keys = await allKeys();
    // No queue fell back to BullMQ's default prefix, whose keys a cluster spreads over many slots.
    expect(keys.filter((k) => k.startsWith('bull:'))).toEqual([]);
    const byQueue = new Map<string, string[]>();
    for (const key of keys) {
      const queue = new RegExp(`^\\{paygate:${db.name}:([\\w.-]+)\\}:\\1:`).exec(key)?.[1];
      if (queue) byQueue.set(queue, [...(byQueue.get(queue) ?? []), key]);
    }
    // Every queue has its keys there (every worker path is a queue, callback deliveries too).
    expect([...byQueue.keys()].sort()).toEqual([...ALL_QUEUES].sort());
    for (const [queue, queueKeys] of byQueue) {
      expect(queueKeys.length).toBeGreaterThan(1);
      const slots = new Set(await Promise.all(queueKeys.map(slotOf)));
      expect({ queue, slots: slots.size }).toEqual({ queue, slots: 1 });
    }
  });
});
