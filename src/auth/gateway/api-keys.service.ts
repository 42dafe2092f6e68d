import { Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { hashSecret, verifySecret } from '../../common/crypto/secret-hash';
import { CREDENTIAL_CHANNEL, CredentialStatusService } from '../credential-status.service';
import { SignInAttempts } from '../sign-in-attempts';
import { GATEWAY_AUDIENCE, GATEWAY_TOKEN_TTL_SECONDS } from './gateway-principal';

export interface ApiKeySummary {
  consumer_key: string;
  created_at: string;
  revoked_at: string | null;
  /** When the key last obtained a token (POST /v1/auth). */
  last_authenticated_at: string | null;
}

export class InvalidGatewayCredentials extends UnauthorizedException {
  constructor() {
    super({ statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' });
  }
}

/** API keys of the gateway (consumer key + secret); the secret is shown once and stored hashed. */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly jwt: JwtService,
    private readonly credentials: CredentialStatusService,
    private readonly signIns: SignInAttempts,
  ) {}

  async issue(clientId: string): Promise<{ consumer_key: string; consumer_secret: string }> {
    const consumerKey = `ck_${randomBytes(16).toString('hex')}`;
    const consumerSecret = `cs_${randomBytes(24).toString('base64url')}`;
    await this.db.query(`INSERT INTO api_keys (client_id, consumer_key, secret_hash) VALUES ($1, $2, $3)`, [
      clientId,
      consumerKey,
      await hashSecret(consumerSecret),
    ]);
    return { consumer_key: consumerKey, consumer_secret: consumerSecret };
  }

  /** The client's keys, newest first, without secrets. */
  async list(clientId: string): Promise<ApiKeySummary[]> {
    const rows = await this.db.query(
      `SELECT consumer_key, created_at, revoked_at, last_authenticated_at FROM api_keys WHERE client_id = $1 ORDER BY created_at DESC, consumer_key`,
      [clientId],
    );
    return rows.map((r: { consumer_key: string; created_at: Date; revoked_at: Date | null; last_authenticated_at: Date | null }) => ({
      consumer_key: r.consumer_key,
      created_at: r.created_at.toISOString(),
      revoked_at: r.revoked_at?.toISOString() ?? null,
      last_authenticated_at: r.last_authenticated_at?.toISOString() ?? null,
    }));
  }

  /**
   * Revokes one of the client's keys: it gets no new token, and every token already issued for it is refused on
   * every process from the commit on (announced on CREDENTIAL_CHANNEL in the same statement). Revoking a revoked key
   * changes nothing. Null when the client has no such key.
   */
  async revoke(clientId: string, consumerKey: string): Promise<ApiKeySummary | null> {
    // least(revoked_at, now()) keeps the first revocation's time; not coalesce: Citus refuses a clock inside it.
    const [revoked]: { id: string }[] = await this.db.query(
      `WITH revoked AS (
         UPDATE api_keys SET revoked_at = least(revoked_at, now()) WHERE client_id = $1 AND consumer_key = $2 RETURNING id
       )
       SELECT id, pg_notify($3, 'api-key:' || id) FROM revoked`,
      [clientId, consumerKey, CREDENTIAL_CHANNEL],
    );
    if (!revoked) return null;
    this.credentials.forgetApiKey(revoked.id);
    return (await this.list(clientId)).find((k) => k.consumer_key === consumerKey) ?? null;
  }

  /** POST /v1/auth from `address`: both spellings of the lifetime, since the FX document reads expires_in. */
  async token(consumerKey: unknown, consumerSecret: unknown, address: string) {
    if (typeof consumerKey !== 'string' || typeof consumerSecret !== 'string' || consumerKey.length > 64 || consumerSecret.length > 200) {
      throw new InvalidGatewayCredentials();
    }
    const key = await this.signIns.attempt({ apiKey: consumerKey }, address, async () => {
      const [found] = await this.db.query(
        `SELECT k.id, k.client_id, k.secret_hash, c.code AS client_code FROM api_keys k JOIN clients c ON c.id = k.client_id
         WHERE k.consumer_key = $1 AND k.revoked_at IS NULL`,
        [consumerKey],
      );
      // An unknown key costs a verification too, so unknown keys and wrong secrets take the same time.
      return (await verifySecret(found?.secret_hash, consumerSecret))
        ? (found as { id: string; client_id: string; client_code: string })
        : null;
    });
    if (!key) throw new InvalidGatewayCredentials();
    await this.db.query(`UPDATE api_keys SET last_authenticated_at = now() WHERE id = $1`, [key.id]);
    const access_token = await this.jwt.signAsync(
      { sub: key.id, cid: key.client_id, ccode: key.client_code },
      { expiresIn: GATEWAY_TOKEN_TTL_SECONDS, audience: GATEWAY_AUDIENCE },
    );
    return { access_token, expiresIn: GATEWAY_TOKEN_TTL_SECONDS, expires_in: GATEWAY_TOKEN_TTL_SECONDS };
  }
}
