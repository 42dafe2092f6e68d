import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ChannelListener } from '../infra/database/channel-listener';

/**
 * How long a process may go on trusting what it read about a credential when no change was announced: a safety net
 * for a listening connection that died without a word. Changes themselves are announced (CREDENTIAL_CHANNEL).
 */
export const CREDENTIAL_STATUS_TTL_MS = 2000;
const MAX_ENTRIES = 10_000;

/**
 * The Postgres channel on which a change to a credential is announced, in the transaction that makes it (NOTIFY is
 * delivered at commit): `api-key:<id>` for a revocation, `user:<id>` for a password reset.
 */
export const CREDENTIAL_CHANNEL = 'paygate_credentials';

/**
 * Whether a token's credential still stands, asked on every authenticated request: an API key not revoked, a
 * wallet user's current token version. Answers are kept (at most CREDENTIAL_STATUS_TTL_MS), so the check is mostly a
 * map lookup; concurrent misses for one credential share one query. Every process listens on CREDENTIAL_CHANNEL and
 * forgets a credential as soon as its change commits, so a revocation or a reset bites on every process at once;
 * while the channel is not held (not yet, or lost) nothing is kept and every check reads the database.
 */
@Injectable()
export class CredentialStatusService implements OnModuleDestroy {
  private readonly apiKeys = new Map<string, { at: number; value: Promise<boolean> }>();
  private readonly users = new Map<string, { at: number; value: Promise<number | null> }>();
  private listening = false;
  private readonly channel: ChannelListener;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.channel = new ChannelListener(config.databaseUrl, CREDENTIAL_CHANNEL, {
      message: (payload) => this.forget(payload),
      listening: () => {
        this.forgetAll();
        this.listening = true;
      },
      lost: () => {
        this.listening = false;
        this.forgetAll();
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.channel.stop();
  }

  apiKeyActive(apiKeyId: unknown): Promise<boolean> {
    if (!isUuid(apiKeyId)) return Promise.resolve(false);
    return this.cached(this.apiKeys, apiKeyId, async () => {
      const [key] = await this.db.query(`SELECT revoked_at IS NULL AS active FROM api_keys WHERE id = $1`, [apiKeyId]);
      return key?.active === true;
    });
  }

  /**
   * The user's current token version; null for an unknown user. Versions only grow and only we sign tokens, so a
   * token newer than what this process remembers (a reset whose announcement has not arrived yet, then a new
   * sign-in) proves the memory stale: it is read again rather than refusing the new token.
   */
  async userTokenVersion(userId: unknown, presented?: number): Promise<number | null> {
    if (!isUuid(userId)) return null;
    const load = async () => {
      const [user] = await this.db.query(`SELECT token_version FROM users WHERE id = $1`, [userId]);
      return user ? Number(user.token_version) : null;
    };
    const remembered = await this.cached(this.users, userId, load);
    if (remembered === null || presented === undefined || presented <= remembered) return remembered;
    this.users.delete(userId);
    return this.cached(this.users, userId, load);
  }

  /** This process made the change: forget at once, without waiting for its own announcement to come back. */
  forgetApiKey(apiKeyId: string): void {
    this.apiKeys.delete(apiKeyId);
  }

  forgetUser(userId: string): void {
    this.users.delete(userId);
  }

  /** Processes that authenticate listen from their first check on (workers and the CLI never do). */
  private cached<T>(entries: Map<string, { at: number; value: Promise<T> }>, key: string, load: () => Promise<T>): Promise<T> {
    this.channel.start();
    if (!this.listening) return load();
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

  private forget(payload: string): void {
    const [kind, id] = payload.split(':');
    if (kind === 'api-key') this.forgetApiKey(id);
    else if (kind === 'user') this.forgetUser(id);
  }

  private forgetAll(): void {
    this.apiKeys.clear();
    this.users.clear();
  }
}

/** Ids in tokens we signed are UUIDs; anything else names no credential (and must not reach a uuid column). */
function isUuid(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
