import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Failed sign-ins allowed per window: per username (guessing one password), per address (trying many users). */
export const SIGN_IN_LIMITS = { perUsername: 5, perAddress: 20, windowMs: 15 * 60 * 1000 } as const;

/**
 * Counts failed portal sign-ins per username and per client address in fixed windows (Postgres, so every api
 * process shares the counts). Unlike the API's @SignInThrottle (every attempt, Redis), only failures count here, and
 * a locked-out user is told so on the page.
 */
@Injectable()
export class SignInFailures {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Seconds until a sign-in may be tried again, or null when it may be tried now. */
  async retryAfterSeconds(username: string, address: string): Promise<number | null> {
    const [row] = await this.db.query(
      `SELECT ceil(extract(epoch FROM max(window_started_at + $3::bigint * interval '1 millisecond' - now())))::int AS seconds
       FROM portal_sign_in_failures
       WHERE window_started_at > now() - $3::bigint * interval '1 millisecond'
         AND ((key = $1 AND failures >= $4) OR (key = $2 AND failures >= $5))`,
      [usernameKey(username), addressKey(address), SIGN_IN_LIMITS.windowMs, SIGN_IN_LIMITS.perUsername, SIGN_IN_LIMITS.perAddress],
    );
    return row?.seconds ? Math.max(1, row.seconds) : null;
  }

  /** One more failure on both keys; a window that has ended starts again. */
  async recordFailure(username: string, address: string): Promise<void> {
    await this.db.query(
      `INSERT INTO portal_sign_in_failures (key, failures, window_started_at) SELECT k, 1, now() FROM unnest($1::varchar[]) AS k
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN portal_sign_in_failures.window_started_at > now() - $2::bigint * interval '1 millisecond'
                         THEN portal_sign_in_failures.failures + 1 ELSE 1 END,
         window_started_at = CASE WHEN portal_sign_in_failures.window_started_at > now() - $2::bigint * interval '1 millisecond'
                                  THEN portal_sign_in_failures.window_started_at ELSE now() END`,
      [[usernameKey(username), addressKey(address)], SIGN_IN_LIMITS.windowMs],
    );
  }

  /** A successful sign-in clears the username's failures (not the address's: other users may share it). */
  async clear(username: string): Promise<void> {
    await this.db.query(`DELETE FROM portal_sign_in_failures WHERE key = $1`, [usernameKey(username)]);
  }
}

function usernameKey(username: string): string {
  return `user:${username.toLowerCase().slice(0, 150)}`;
}

function addressKey(address: string): string {
  return `ip:${address}`;
}
