import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { callbackUrlProblem } from './callback-url';

export interface CallbackSettings {
  url: string | null;
  username: string | null;
  password: string | null;
  signingSecret: string;
}

/** A client's collection callback URL, the Basic-auth credentials we present to it, and its signing secret. */
@Injectable()
export class CallbackSettingsService {
  private readonly box: SecretBox;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.box = new SecretBox(config.jwtSecret, 'paygate/callback-settings/v1');
  }

  async setEndpoint(clientId: string, endpoint: { url: string; username: string; password: string }): Promise<void> {
    const problem = callbackUrlProblem(endpoint.url, this.config.isSandbox);
    if (problem) throw new BadRequestException(`callback URL ${problem}`);
    await this.db.query(
      `INSERT INTO client_callback_settings (client_id, url, username, password_encrypted, signing_secret_encrypted)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (client_id) DO UPDATE SET url = $2, username = $3, password_encrypted = $4, updated_at = now()`,
      [clientId, endpoint.url, endpoint.username, this.box.seal(endpoint.password), this.box.seal(newSigningSecret())],
    );
  }

  /** Issues a new signing secret, returned once; callbacks signed from now on use it. */
  async rotateSigningSecret(clientId: string): Promise<string> {
    const secret = newSigningSecret();
    await this.db.query(
      `INSERT INTO client_callback_settings (client_id, signing_secret_encrypted) VALUES ($1, $2)
       ON CONFLICT (client_id) DO UPDATE SET signing_secret_encrypted = $2, updated_at = now()`,
      [clientId, this.box.seal(secret)],
    );
    return secret;
  }

  async of(clientId: string): Promise<CallbackSettings> {
    const [row] = await this.db.query(`SELECT * FROM client_callback_settings WHERE client_id = $1`, [clientId]);
    if (!row) return { url: null, username: null, password: null, signingSecret: await this.rotateSigningSecret(clientId) };
    return {
      url: row.url,
      username: row.username,
      password: row.password_encrypted ? this.box.open(row.password_encrypted) : null,
      signingSecret: this.box.open(row.signing_secret_encrypted),
    };
  }
}

function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}
