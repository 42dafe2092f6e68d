import type { RedisClient } from '../../infra/queue/redis';
import { parseOperatorJson } from '../operator-json';

const PREFIX = 'paygate:mpesa:query';
const POLL_MS = 100;

/**
 * Where the results of our reconciliation queries to Daraja (Account Balance, Transaction Status) meet the call that
 * awaits them. Daraja answers on a ResultURL, which any API process may receive while the query runs in another
 * (the worker's daily run, the CLI), so the result is handed over in Redis: a result is kept only for a query we
 * opened, and only until its time limit has passed.
 */
export class DarajaResultInbox {
  constructor(private readonly redis: RedisClient) {}

  /** Opens a query: its result is taken from now until `ttlMs` from now. */
  async open(queryId: string, ttlMs: number): Promise<void> {
    await this.redis.set(`${PREFIX}:${queryId}:open`, '1', 'PX', ttlMs);
  }

  /** Hands a result over to its query; false when no open query awaits it (unknown, or past its time limit). */
  async deliver(queryId: string, body: unknown): Promise<boolean> {
    const ttl = await this.redis.pttl(`${PREFIX}:${queryId}:open`);
    if (ttl <= 0) return false;
    // The first result of a query wins (Daraja may post one twice, or a time-out after the result).
    await this.redis.set(`${PREFIX}:${queryId}:result`, JSON.stringify(body), 'PX', ttl, 'NX');
    return true;
  }

  /** The result of an open query once it arrives, or null when none came within `timeoutMs`. */
  async wait(queryId: string, timeoutMs: number): Promise<unknown> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const result = await this.redis.get(`${PREFIX}:${queryId}:result`);
      if (result !== null) {
        await this.redis.del(`${PREFIX}:${queryId}:open`, `${PREFIX}:${queryId}:result`);
        return parseOperatorJson(result);
      }
      if (Date.now() >= until) {
        await this.redis.del(`${PREFIX}:${queryId}:open`);
        return null;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
