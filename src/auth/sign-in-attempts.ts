import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TooManyRequests } from '../common/errors/too-many-requests';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';

const WINDOW_MS = 60_000;

/** What a sign-in names: a wallet user (wallet login and the portal share the count) or a gateway API key. */
export type SignInCredential = { user: string } | { apiKey: string };

/**
 * The one sign-in throttle, of wallet login, the portal and POST /v1/auth: LOGIN_RATE_LIMIT_PER_MINUTE attempts per
 * credential and LOGIN_IP_RATE_LIMIT_PER_MINUTE per client address in a minute's window, counted in Postgres before
 * the password is checked (SQL `sign_in_attempt`, src/auth/sql/sign_in_attempt.sql), so parallel attempts are
 * limited exactly as sequential ones and a refused attempt costs no password hash. A right password gives its
 * attempt back: only failures stay counted.
 */
@Injectable()
export class SignInAttempts {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Runs `verify` as one counted attempt: TooManyRequests (429, Retry-After) without running it when a limit is
   * reached; its answer otherwise, the attempt given back when that answer is a success (not null).
   */
  async attempt<T>(credential: SignInCredential, address: string, verify: () => Promise<T | null>): Promise<T | null> {
    const keys = [credentialKey(credential), `ip:${address}`];
    const [{ wait }] = await this.db.query(`SELECT sign_in_attempt(p_keys => $1, p_limits => $2, p_window_ms => $3) AS wait`, [
      keys,
      [this.config.loginRateLimitPerMinute, this.config.loginIpRateLimitPerMinute],
      WINDOW_MS,
    ]);
    if (wait !== null) throw new TooManyRequests(wait);
    const result = await verify();
    if (result !== null) {
      await this.db.query(`UPDATE sign_in_attempts SET attempts = attempts - 1 WHERE key = ANY ($1) AND attempts > 0`, [keys]);
    }
    return result;
  }
}

/** Keys hold a digest of the credential, so the table holds no usernames; usernames count case-insensitively. */
function credentialKey(credential: SignInCredential): string {
  const [kind, value] = 'user' in credential ? ['user', credential.user.trim().toLowerCase()] : ['key', credential.apiKey.trim()];
  return `${kind}:${createHash('sha256').update(value).digest('base64url')}`;
}
