import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Callback settings per kind of event (collections, payouts, airtime) with one signing secret per client kept
 * apart from them, so reading an endpoint never has to create a secret; each delivery remembers its kind. The
 * hourly FX refresh claims each hour once. A sandbox keeps its random server secret in `settings`; users get a
 * token version (raised by a password reset) and API keys the time they last obtained a token.
 */
export class CallbackKindsFxKeys1763800000006 implements MigrationInterface {
  name = 'CallbackKindsFxKeys1763800000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE client_signing_secrets (
        client_id        uuid PRIMARY KEY REFERENCES clients(id),
        secret_encrypted text NOT NULL,
        rotated_at       timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO client_signing_secrets (client_id, secret_encrypted, rotated_at)
        SELECT client_id, signing_secret_encrypted, updated_at FROM client_callback_settings;

      -- Rows that only held a signing secret carry no endpoint; the rest become the collections endpoint.
      DELETE FROM client_callback_settings WHERE url IS NULL;
      ALTER TABLE client_callback_settings DROP COLUMN signing_secret_encrypted;
      ALTER TABLE client_callback_settings ALTER COLUMN url SET NOT NULL;
      ALTER TABLE client_callback_settings ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'collections'
        CHECK (kind IN ('collections', 'payouts', 'airtime'));
      ALTER TABLE client_callback_settings ALTER COLUMN kind DROP DEFAULT;
      ALTER TABLE client_callback_settings DROP CONSTRAINT client_callback_settings_pkey;
      ALTER TABLE client_callback_settings ADD PRIMARY KEY (client_id, kind);

      ALTER TABLE callback_deliveries ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'collections'
        CHECK (kind IN ('collections', 'payouts', 'airtime'));
      ALTER TABLE callback_deliveries ALTER COLUMN kind DROP DEFAULT;

      -- One row per clock hour of FX refresh: the worker that claims the hour refreshes, so the rates are written
      -- once per hour however many workers run; a claim not completed in time can be taken over.
      CREATE TABLE fx_refreshes (
        hour         timestamptz PRIMARY KEY,
        claimed_at   timestamptz,
        completed_at timestamptz,
        source       varchar(32),
        rates        integer
      );

      -- Server-wide settings; a sandbox without JWT_SECRET keeps its own random server secret here.
      CREATE TABLE settings (
        name       varchar(64) PRIMARY KEY,
        value      text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- Raised by a password reset: wallet tokens carry the version they were issued under.
      ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN last_authenticated_at timestamptz;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys DROP COLUMN last_authenticated_at;
      ALTER TABLE users DROP COLUMN token_version;
      DROP TABLE settings;
      DROP TABLE fx_refreshes;
      ALTER TABLE callback_deliveries DROP COLUMN kind;

      DELETE FROM client_callback_settings WHERE kind <> 'collections';
      ALTER TABLE client_callback_settings DROP CONSTRAINT client_callback_settings_pkey;
      ALTER TABLE client_callback_settings DROP COLUMN kind;
      ALTER TABLE client_callback_settings ADD PRIMARY KEY (client_id);
      ALTER TABLE client_callback_settings ALTER COLUMN url DROP NOT NULL;
      ALTER TABLE client_callback_settings ADD COLUMN signing_secret_encrypted text;
      UPDATE client_callback_settings c SET signing_secret_encrypted = s.secret_encrypted
        FROM client_signing_secrets s WHERE s.client_id = c.client_id;
      INSERT INTO client_callback_settings (client_id, signing_secret_encrypted)
        SELECT client_id, secret_encrypted FROM client_signing_secrets s
        WHERE NOT EXISTS (SELECT 1 FROM client_callback_settings c WHERE c.client_id = s.client_id);
      DELETE FROM client_callback_settings WHERE signing_secret_encrypted IS NULL;
      ALTER TABLE client_callback_settings ALTER COLUMN signing_secret_encrypted SET NOT NULL;
      DROP TABLE client_signing_secrets;
    `);
  }
}
