import { Redis, RedisOptions } from 'ioredis';

/**
 * A Redis connection that never gives up: when Redis is away the process keeps serving (Postgres holds every
 * job in the outbox) and reconnects with a capped backoff once Redis is back.
 */
export function createRedis(url: string, extra: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
    ...extra,
  });
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
