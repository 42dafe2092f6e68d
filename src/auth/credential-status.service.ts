import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * How long a process may go on trusting what it read about a credential: the bound on how late a revoked API key
 * or a password reset takes effect on a process that did not make the change itself.
 */
export const CREDENTIAL_STATUS_TTL_MS = 2000;
const MAX_ENTRIES = 10_000;

/**
 * Whether a token's credential still stands, asked on every authenticated request: an API key not revoked, a
 * wallet user's current token version. Answers are kept for CREDENTIAL_STATUS_TTL_MS, so the check is mostly a
 * map lookup; concurrent misses for one credential share one query.
 */
@Injectable()
export class CredentialStatusService {
  private readonly apiKeys = new Map<string, { at: number; value: Promise<boolean> }>();
  private readonly users = new Map<string, { at: number; value: Promise<number | null> }>();

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  apiKeyActive(apiKeyId: unknown): Promise<boolean> {
    if (!isUuid(apiKeyId)) return Promise.resolve(false);
    return cached(this.apiKeys, apiKeyId, async () => {
      const [key] = await this.db.query(`SELECT revoked_at IS NULL AS active FROM api_keys WHERE id = $1`, [apiKeyId]);
      return key?.active === true;
    });
  }

  /**
   * The user's current token version; null for an unknown user. Versions only grow and only we sign tokens, so a
   * token newer than what this process remembers (a password reset made by another process, then a new sign-in)
   * proves the memory stale: it is read again rather than refusing the new token for up to the TTL.
   */
  async userTokenVersion(userId: unknown, presented?: number): Promise<number | null> {
    if (!isUuid(userId)) return null;
    const load = async () => {
      const [user] = await this.db.query(`SELECT token_version FROM users WHERE id = $1`, [userId]);
      return user ? Number(user.token_version) : null;
    };
    const remembered = await cached(this.users, userId, load);
    if (remembered === null || presented === undefined || presented <= remembered) return remembered;
    this.users.delete(userId);
    return cached(this.users, userId, load);
  }

  /** This process made the change: forget at once what it knew (other processes catch up within the TTL). */
  forgetApiKey(apiKeyId: string): void {
    this.apiKeys.delete(apiKeyId);
  }

  forgetUser(userId: string): void {
    this.users.delete(userId);
  }
}

/** Ids in tokens we signed are UUIDs; anything else names no credential (and must not reach a uuid column). */
function isUuid(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

function cached<T>(entries: Map<string, { at: number; value: Promise<T> }>, key: string, load: () => Promise<T>): Promise<T> {
  const now = Date.now();
  const hit = entries.get(key);
  if (hit && now - hit.at < CREDENTIAL_STATUS_TTL_MS) return hit.value;
  if (entries.size >= MAX_ENTRIES) entries.clear();
  const value = load();
  entries.set(key, { at: now, value });
  // A failed lookup is not remembered: the next request asks again.
  value.catch(() => {
    if (entries.get(key)?.value === value) entries.delete(key);
  });
  return value;
}
