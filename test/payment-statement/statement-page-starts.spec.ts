import { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/infra/config/app-config';
import { createRedis } from '../../src/infra/queue/redis';
import { StatementPageStarts } from '../../src/payment-statement/statement-page-starts';

/** Against the suite's real Redis (a cluster with REDIS_CLUSTER_NODES): the page starts are what every API process shares. */
describe('StatementPageStarts', () => {
  const redis = createRedis(loadConfig());
  const prefix = `statement-pages-test:${randomUUID()}`;
  const period = { clientId: 'c1', start: new Date('2025-01-01T00:00:00Z'), end: new Date('2025-01-31T23:59:59.999Z') };
  const row = (id: number) => ({ at: '2025-01-02 10:00:00.123456+00', id: String(id) });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // A loaded CI machine once took over the 200 ms a statement waits; what is tested here is what Redis keeps.
  const patient = (namespace: string, keepMs?: number) => new StatementPageStarts(redis, namespace, keepMs, 10_000);

  const ready = async (connection: typeof redis) => {
    if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
  };

  beforeAll(() => ready(redis));
  afterAll(async () => {
    // A cluster spreads the keys over its masters, and KEYS answers for one node only.
    for (const node of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
      const keys = await node.keys(`${prefix}*`);
      for (const key of keys) await redis.del(key);
    }
    redis.disconnect();
  });

  it('knows a page start only for the same client, period and offset', async () => {
    const starts = patient(prefix);
    await starts.set(period, 100, row(1));
    expect(await starts.get(period, 100)).toEqual(row(1));
    expect(await starts.get(period, 200)).toBeNull();
    expect(await starts.get({ ...period, clientId: 'c2' }, 100)).toBeNull();
    expect(await starts.get({ ...period, end: new Date('2025-01-31T00:00:00Z') }, 100)).toBeNull();
  });

  it('is shared by every process using the same Redis and namespace, and by no other namespace', async () => {
    await patient(prefix).set(period, 300, row(3));
    const second = redis.duplicate(); // the connection another API process would hold
    try {
      await ready(second);
      expect(await new StatementPageStarts(second, prefix, undefined, 10_000).get(period, 300)).toEqual(row(3));
    } finally {
      second.disconnect();
    }
    expect(await patient(`${prefix}-other-database`).get(period, 300)).toBeNull();
  });

  it('forgets a page start once it has not been used for its keep time; a read keeps it longer', async () => {
    // Seconds: on a loaded machine a 250 ms timer fired late enough to pass a 400 ms keep time (a CI run failed so).
    const starts = patient(prefix, 3000);
    await starts.set(period, 500, row(5));
    await sleep(2000);
    expect(await starts.get(period, 500)).toEqual(row(5));
    await sleep(2000);
    expect(await starts.get(period, 500)).toEqual(row(5)); // 4 s after the write, 2 s after the read
    await sleep(4000);
    expect(await starts.get(period, 500)).toBeNull();
  });

  it('answers "unknown" at once while Redis is unreachable, so the page is counted by OFFSET', async () => {
    const away = createRedis({ redisUrl: 'redis://127.0.0.1:1', redisClusterNodes: null }, { lazyConnect: true });
    const starts = new StatementPageStarts(away, prefix);
    await starts.set(period, 100, row(1));
    expect(await starts.get(period, 100)).toBeNull();
    away.disconnect();
  });
});
