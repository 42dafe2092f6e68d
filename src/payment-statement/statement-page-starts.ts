import { Logger } from '@nestjs/common';
import type { Keyset } from '../common/listing';
import { withTimeout } from '../common/with-timeout';
import type { RedisClient } from '../infra/queue/redis';

/** A page start is kept this long after it was last written or read. */
const KEEP_MS = 10 * 60_000;
/** A statement request waits at most this long for Redis before it counts by OFFSET. */
const REDIS_TIMEOUT_MS = 200;

/**
 * Where the pages of a payment statement start, learnt from the pages already served, and kept in Redis so that
 * every API process knows them. Merchants page the statement by offset and limit (collection document §4), and
 * OFFSET makes Postgres read and discard every row before the page, so the last page of a long period cost a
 * hundred times the first. After a full page at offset o, the row at offset o + limit − 1 is known; a request for
 * offset o + limit (the next page), served by any process, then seeks past that row in the
 * (client_id, created_at, id) index instead of counting rows, and costs the same at any depth.
 *
 * The same position means the same rows as OFFSET as long as no payment of the period was created before that row
 * in between; one that was (a charge whose transaction committed after the page was read) is not shown again
 * under a shifted offset, where OFFSET would have repeated the row before it. An offset nobody reached by paging,
 * or any offset while Redis is away, is counted by OFFSET as before: slower, never different rows.
 */
export class StatementPageStarts {
  private readonly logger = new Logger(StatementPageStarts.name);
  private lastErrorLog = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly keepMs = KEEP_MS,
    private readonly timeoutMs = REDIS_TIMEOUT_MS,
  ) {}

  /** The last row before `offset`, when a page ending there was served recently. Reading it keeps it longer. */
  async get(period: StatementPeriod, offset: number): Promise<Keyset | null> {
    // The shared connection queues commands while Redis is away; a statement must not wait for it to come back.
    if (this.redis.status !== 'ready') return null;
    try {
      const value = await withTimeout(
        this.redis.getex(this.key(period, offset), 'PX', this.keepMs),
        this.timeoutMs,
        `Redis did not answer within ${this.timeoutMs} ms`,
      );
      return value ? (JSON.parse(value) as Keyset) : null;
    } catch (error) {
      this.warn(error);
      return null;
    }
  }

  /** Records that the page at `offset` starts after `after` (the last row of the page before it). */
  async set(period: StatementPeriod, offset: number, after: Keyset): Promise<void> {
    if (this.redis.status !== 'ready') return;
    try {
      const value = JSON.stringify({ at: after.at, id: after.id });
      await withTimeout(
        this.redis.set(this.key(period, offset), value, 'PX', this.keepMs),
        this.timeoutMs,
        `Redis did not answer within ${this.timeoutMs} ms`,
      );
    } catch (error) {
      this.warn(error);
    }
  }

  private key({ clientId, start, end }: StatementPeriod, offset: number): string {
    return `${this.prefix}:${clientId}:${start.getTime()}:${end.getTime()}:${offset}`;
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastErrorLog < 30_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn(`statement pages counted by OFFSET while Redis is unavailable: ${(error as Error).message}`);
  }
}

/** One client's statement period, as the request named it. */
export interface StatementPeriod {
  clientId: string;
  start: Date;
  end: Date;
}
