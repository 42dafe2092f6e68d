import { Cluster, Redis, RedisOptions } from 'ioredis';

/** A connection to one Redis, or to a Redis Cluster: both speak the same commands. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: a Redis Cluster's seeds when REDIS_CLUSTER_NODES is set (REDIS_URL is then ignored), else one server. */
export interface RedisTarget {
  redisUrl: string;
  redisClusterNodes: Array<{ host: string; port: number }> | null;
}

/** The wait before reconnecting to a Redis that is away: growing, capped at 5 s, never giving up. */
export const reconnectDelay = (attempt: number) => Math.min(attempt * 200, 5000);

/**
 * A Redis connection that never gives up: when Redis is away the process keeps serving (Postgres holds every
 * job in the outbox) and reconnects with a capped backoff once Redis is back. Every Redis client of the server is
 * made here, so that one variable moves all of them to a cluster. BullMQ's workers need `maxRetriesPerRequest: null`
 * (a blocking wait must not be cut short), on each node's connection of a cluster as well.
 */
export function createRedis(target: RedisTarget, extra: RedisOptions = {}): RedisClient {
  const options: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra };
  let redis: RedisClient;
  if (target.redisClusterNodes) {
    // ioredis never reconnects a lost node itself (it asks the others for the slots instead); when no node
    // answers, the cluster client tries again on the same backoff. Offline queueing is the cluster client's to decide.
    redis = new Cluster(target.redisClusterNodes, {
      clusterRetryStrategy: reconnectDelay,
      enableOfflineQueue: options.enableOfflineQueue,
      lazyConnect: options.lazyConnect,
      redisOptions: options,
    });
  } else {
    redis = new Redis(target.redisUrl, { retryStrategy: reconnectDelay, ...options });
  }
  // Connection errors are reported by readiness and metrics; without a listener ioredis would print each retry.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A key prefix for `purpose`, one per database: deployments (and test runs) that share a Redis but not a database
 * keep their keys apart.
 */
export function redisNamespace(databaseUrl: string, purpose: string): string {
  return `${purpose}:${new URL(databaseUrl).pathname.slice(1)}`;
}

/**
 * BullMQ's key prefix for `queue`. BullMQ's scripts touch many keys of a queue at once, which a cluster allows only
 * within one hash slot: on a cluster the prefix is a hash tag of its own per queue (and per database, as
 * redisNamespace), so each queue lives in one slot and the queues spread over the masters. On one server the prefix
 * stays BullMQ's default, so an upgrade finds the jobs already queued.
 */
export function queuePrefix(target: RedisTarget & { databaseUrl: string }, queue: string): string | undefined {
  return target.redisClusterNodes ? `{${redisNamespace(target.databaseUrl, 'paygate')}:${queue}}` : undefined;
}
