import { Inject, Injectable, Logger } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { withTimeout } from '../../common/with-timeout';
import { REDIS } from '../queue/queue.module';
import type { RedisClient } from '../queue/redis';

/** One round trip: count the hit, start the window on the first, block the key once past the limit. */
const REDIS_TIMEOUT_MS = 500;

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return {hits, ttl, 1, blocked} end
if hits > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  return {hits, ttl, 1, tonumber(ARGV[3])}
end
return {hits, ttl, 0, 0}`;
const THROTTLE_COMMAND = 'paygateThrottleIncrement';

/**
 * Rate-limit counters in Redis, so every api process counts against the same limits. Keys carry the database
 * name, so environments sharing a Redis do not share counters. While Redis is away requests are let through
 * (sign-in still needs the right password; an outage of Redis must not lock merchants out).
 */
@Injectable()
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger(RedisThrottlerStorage.name);
  private lastErrorLog = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    // Sent by its SHA (EVALSHA) on every request but the first: the script's text travels, and is hashed, once.
    redis.defineCommand(THROTTLE_COMMAND, { numberOfKeys: 2, lua: INCREMENT });
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    // The script reads and writes both keys: a hash tag on the tracker keeps them in one slot of a Redis Cluster.
    const base = `${this.prefix}:${throttlerName}:{${key}}`;
    try {
      // The shared connection queues commands while Redis is away; a request must not wait for it to come back.
      if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
      const count = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number[]>>)[THROTTLE_COMMAND];
      const counted = count.call(this.redis, base, `${base}:blocked`, ttl, limit, blockDuration);
      const [hits, ttlMs, blocked, blockMs] = await withTimeout(
        counted,
        REDIS_TIMEOUT_MS,
        `Redis did not answer within ${REDIS_TIMEOUT_MS} ms`,
      );
      return {
        totalHits: hits,
        timeToExpire: Math.ceil(ttlMs / 1000),
        isBlocked: blocked === 1,
        timeToBlockExpire: Math.ceil(blockMs / 1000),
      };
    } catch (error) {
      if (Date.now() - this.lastErrorLog > 30_000) {
        this.lastErrorLog = Date.now();
        this.logger.warn(`rate limits not enforced while Redis is unavailable: ${(error as Error).message}`);
      }
      return {
        totalHits: 0,
        timeToExpire: 0,
        isBlocked: false,
        timeToBlockExpire: 0,
      };
    }
  }
}
