import { BadRequestException, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { callbackUrlProblem } from '../common/url-safety/callback-url';

/** The events a client can have its own callback endpoint for. */
export const CALLBACK_KINDS = ['collections', 'payouts', 'airtime'] as const;
export type CallbackKind = (typeof CALLBACK_KINDS)[number];

export function isCallbackKind(value: unknown): value is CallbackKind {
  return (CALLBACK_KINDS as readonly unknown[]).includes(value);
}

/** Where a client wants one kind of callback, and the Basic-auth credentials we present there. */
export interface CallbackEndpoint {
  url: string;
  username: string | null;
  password: string | null;
}

/** What delivering a client's callbacks needs: its valid signing secrets (newest first) and its endpoints. */
export interface DeliverySettings {
  signingSecrets: string[];
  endpoints: Partial<Record<CallbackKind, CallbackEndpoint>>;
}

interface StoredEndpoint {
  url: string;
  username: string | null;
  password_encrypted: string | null;
}

/**
 * A client's callback endpoints (one per kind) and its signing secret (one per client, created with the client).
 * Reads take the caller's EntityManager so they run on the connection (and in the transaction) the caller holds,
 * and never write.
 */
@Injectable()
export class CallbackSettingsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(CallbackSettingsService.name);
  private readonly box: SecretBox;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.box = new SecretBox(config.jwtSecret, 'paygate/callback-settings/v1');
  }

  /**
   * Clients created before signing secrets were created with the client get theirs now, once: the migration
   * cannot seal a secret, and reading one must never write. The subquery is not correlated: Citus refuses a
   * correlated one from a reference table (clients) into a distributed one.
   */
  async onApplicationBootstrap(): Promise<void> {
    const missing: { id: string }[] = await this.db.query(
      `SELECT c.id FROM clients c WHERE c.id NOT IN (SELECT s.client_id FROM client_signing_secrets s)`,
    );
    for (const { id } of missing) await this.createSigningSecret(this.db.manager, id);
    if (missing.length > 0) this.logger.log(`issued signing secrets for ${missing.length} client(s) that had none`);
  }

  async setEndpoint(clientId: string, kind: CallbackKind, endpoint: CallbackEndpoint): Promise<void> {
    const problem = callbackUrlProblem(endpoint.url, this.config.isSandbox);
    if (problem) throw new BadRequestException(`callback URL ${problem}`);
    if ((endpoint.username === null) !== (endpoint.password === null))
      throw new BadRequestException('callback username and password go together');
    await this.db.query(
      `INSERT INTO client_callback_settings (client_id, kind, url, username, password_encrypted) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (client_id, kind) DO UPDATE SET url = $3, username = $4, password_encrypted = $5, updated_at = EXCLUDED.updated_at`,
      [clientId, kind, endpoint.url, endpoint.username, endpoint.password === null ? null : this.box.seal(endpoint.password)],
    );
  }

  async endpointFor(manager: EntityManager, clientId: string, kind: CallbackKind): Promise<CallbackEndpoint | null> {
    const [row] = await manager.query(
      `SELECT url, username, password_encrypted FROM client_callback_settings WHERE client_id = $1 AND kind = $2`,
      [clientId, kind],
    );
    return row ? this.opened(row) : null;
  }

  /** The delivery settings of each of these clients that has a signing secret, read in one query. */
  async deliverySettingsOf(clientIds: string[]): Promise<Map<string, DeliverySettings>> {
    const rows: Array<{
      client_id: string;
      secret: string;
      previous: string | null;
      endpoints: Array<StoredEndpoint & { kind: CallbackKind }>;
    }> = await this.db.query(
      `SELECT s.client_id, s.secret_encrypted AS secret, CASE WHEN s.previous_valid_until > now() THEN s.previous_secret_encrypted END AS previous,
           coalesce((SELECT json_agg(json_build_object('kind', c.kind, 'url', c.url, 'username', c.username, 'password_encrypted', c.password_encrypted))
                     FROM client_callback_settings c WHERE c.client_id = s.client_id), '[]') AS endpoints
         FROM client_signing_secrets s WHERE s.client_id = ANY($1::uuid[])`,
      [clientIds],
    );
    return new Map(
      rows.map((row) => [
        row.client_id,
        {
          signingSecrets: this.openedSecrets(row.secret, row.previous),
          endpoints: Object.fromEntries(row.endpoints.map((endpoint) => [endpoint.kind, this.opened(endpoint)])),
        },
      ]),
    );
  }

  /** Called by ClientsService.create in the transaction that creates the client. */
  async createSigningSecret(manager: EntityManager, clientId: string): Promise<void> {
    await manager.query(
      `INSERT INTO client_signing_secrets (client_id, secret_encrypted) VALUES ($1, $2) ON CONFLICT (client_id) DO NOTHING`,
      [clientId, this.box.seal(newSigningSecret())],
    );
  }

  /**
   * Issues a new signing secret, returned once; callbacks signed from now on use it. With an overlap (the portal's
   * rotation) the previous secret stays valid, and signs callbacks beside the new one, until the overlap ends; a
   * rotation without one (seed) retires it at once.
   */
  async rotateSigningSecret(clientId: string, overlapMs = 0): Promise<string> {
    const secret = newSigningSecret();
    await this.db.query(
      // The overlap's end is worked out in VALUES: Citus takes only immutable expressions in DO UPDATE SET.
      `INSERT INTO client_signing_secrets (client_id, secret_encrypted, previous_valid_until)
       VALUES ($1, $2, CASE WHEN $3::bigint > 0 THEN now() + $3::bigint * interval '1 millisecond' END)
       ON CONFLICT (client_id) DO UPDATE SET secret_encrypted = $2, rotated_at = EXCLUDED.rotated_at,
         previous_secret_encrypted = CASE WHEN $3::bigint > 0 THEN client_signing_secrets.secret_encrypted END,
         previous_valid_until = EXCLUDED.previous_valid_until`,
      [clientId, this.box.seal(secret), overlapMs],
    );
    return secret;
  }

  /** When the secret was last rotated and until when the previous one stays valid (null: it is not). */
  async signingSecretStatus(clientId: string): Promise<{ rotatedAt: Date; previousValidUntil: Date | null }> {
    const [row] = await this.db.query(
      `SELECT rotated_at, CASE WHEN previous_valid_until > now() THEN previous_valid_until END AS previous_valid_until
       FROM client_signing_secrets WHERE client_id = $1`,
      [clientId],
    );
    return { rotatedAt: row.rotated_at, previousValidUntil: row.previous_valid_until };
  }

  private opened(row: StoredEndpoint): CallbackEndpoint {
    return { url: row.url, username: row.username, password: row.password_encrypted ? this.box.open(row.password_encrypted) : null };
  }

  private openedSecrets(current: string, previous: string | null): string[] {
    return [this.box.open(current), ...(previous ? [this.box.open(previous)] : [])];
  }
}

/**
 * `whsec_` and 24 random bytes in standard base64 (32 characters, no padding): Standard Webhooks' secret form, whose
 * text Stripe-style verifiers take as it is, so the one string the merchant is shown verifies both signatures.
 */
function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}
