import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';

/** However active, a session ends this long after sign-in. */
export const PORTAL_SESSION_MAX_AGE_MS = 12 * 3600 * 1000;

/** A signed-in wallet user of one client. */
export interface PortalSession {
  userId: string;
  clientId: string;
  username: string;
  clientName: string;
  /** The client's time zone (IANA name): the portal shows times and counts days in it. */
  timeZone: string;
  csrfToken: string;
}

function sessionId(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Portal sessions in Postgres: the cookie carries a random token, the row only its hash, so the table alone signs
 * no one in. A session ends after PORTAL_IDLE_TIMEOUT_MS without a request, after PORTAL_SESSION_MAX_AGE_MS in any
 * case, on sign-out, or when the user's password is reset (its token version moves on). Every request reads the
 * row (no cache), so a sign-out or a reset bites on every process from its commit on.
 */
@Injectable()
export class PortalSessionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Opens a session of the user as verified (its token version then); the token goes into the cookie only. */
  async start(user: { id: string; clientId: string; tokenVersion: number }): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.db.query(
      `INSERT INTO portal_sessions (id, user_id, client_id, csrf_token, token_version, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + $6::bigint * interval '1 millisecond')`,
      [sessionId(token), user.id, user.clientId, randomBytes(32).toString('base64url'), user.tokenVersion, PORTAL_SESSION_MAX_AGE_MS],
    );
    // Sessions that ended long ago are of no use to anyone; cleared here rather than by a scheduler.
    await this.db.query(`DELETE FROM portal_sessions WHERE expires_at < now() - interval '1 day'`);
    return token;
  }

  /** The live session of the token, its idle clock restarted; null when there is none (unknown, idle, expired). */
  async resume(token: string): Promise<PortalSession | null> {
    if (!/^[\w-]{43}$/.test(token)) return null;
    const [[session]]: [Record<string, string>[], number] = await this.db.query(
      `UPDATE portal_sessions s SET last_seen_at = now()
       FROM users u, clients c
       WHERE s.id = $1 AND u.id = s.user_id AND c.id = s.client_id AND u.client_id = s.client_id AND u.token_version = s.token_version
         AND s.expires_at > now() AND s.last_seen_at > now() - $2::bigint * interval '1 millisecond'
       RETURNING s.user_id, s.client_id, s.csrf_token, u.username, c.name AS client_name, c.time_zone`,
      [sessionId(token), this.config.portalIdleTimeoutMs],
    );
    if (!session) return null;
    return {
      userId: session.user_id,
      clientId: session.client_id,
      username: session.username,
      clientName: session.client_name,
      timeZone: session.time_zone,
      csrfToken: session.csrf_token,
    };
  }

  async end(token: string): Promise<void> {
    await this.db.query(`DELETE FROM portal_sessions WHERE id = $1`, [sessionId(token)]);
  }
}
