import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The merchant portal: sessions of signed-in wallet users (the cookie carries a random token, the row its hash),
 * failed sign-ins counted per username and per address for the throttle, the previous signing secret kept valid
 * for an overlap after a rotation, replays of callback deliveries, and the indexes the portal's lists page by.
 */
export class PortalSessions1763800000007 implements MigrationInterface {
  name = 'PortalSessions1763800000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE portal_sessions (
        id           char(64) PRIMARY KEY,
        user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        client_id    uuid NOT NULL REFERENCES clients(id),
        csrf_token   varchar(64) NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at   timestamptz NOT NULL
      );
      CREATE INDEX portal_sessions_expires_idx ON portal_sessions (expires_at);

      -- One row per throttled key ('user:<name>' or 'ip:<address>'): failures within the current window.
      CREATE TABLE portal_sign_in_failures (
        key               varchar(200) PRIMARY KEY,
        failures          integer NOT NULL,
        window_started_at timestamptz NOT NULL
      );

      ALTER TABLE client_signing_secrets ADD COLUMN previous_secret_encrypted text,
        ADD COLUMN previous_valid_until timestamptz;

      -- A replay is one extra attempt outside the retry schedule: requested_at coalesces repeated requests,
      -- replays keeps the schedule's attempt count apart from them, and each attempt says whether it was one.
      ALTER TABLE callback_deliveries ADD COLUMN replay_requested_at timestamptz,
        ADD COLUMN replays smallint NOT NULL DEFAULT 0;
      ALTER TABLE callback_attempts ADD COLUMN replay boolean NOT NULL DEFAULT false;

      CREATE INDEX callback_deliveries_client_created_idx ON callback_deliveries (client_id, created_at, id);
      CREATE INDEX payouts_client_created_idx ON payouts (client_id, created_at, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX payouts_client_created_idx;
      DROP INDEX callback_deliveries_client_created_idx;
      ALTER TABLE callback_attempts DROP COLUMN replay;
      ALTER TABLE callback_deliveries DROP COLUMN replays, DROP COLUMN replay_requested_at;
      ALTER TABLE client_signing_secrets DROP COLUMN previous_valid_until, DROP COLUMN previous_secret_encrypted;
      DROP TABLE portal_sign_in_failures;
      DROP TABLE portal_sessions;
    `);
  }
}
