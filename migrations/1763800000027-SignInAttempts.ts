import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One sign-in throttle for the portal, wallet login and POST /v1/auth (src/auth/sign-in-attempts.ts): the portal's
 * failure counts become the attempts of every sign-in, counted before the password is checked. The portal's rows
 * were counted under other keys and limits, so counting starts afresh. A portal session remembers the user's token
 * version it was opened under, so a password reset ends it as it ends the user's wallet tokens.
 */
export class SignInAttempts1763800000027 implements MigrationInterface {
  name = 'SignInAttempts1763800000027';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE portal_sign_in_failures RENAME TO sign_in_attempts;
      ALTER TABLE sign_in_attempts RENAME COLUMN failures TO attempts;
      ALTER TABLE sign_in_attempts RENAME CONSTRAINT portal_sign_in_failures_pkey TO sign_in_attempts_pkey;
      DELETE FROM sign_in_attempts;

      ALTER TABLE portal_sessions ADD COLUMN token_version integer;
      UPDATE portal_sessions s SET token_version = u.token_version FROM users u WHERE u.id = s.user_id;
      ALTER TABLE portal_sessions ALTER COLUMN token_version SET NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE portal_sessions DROP COLUMN token_version;
      DELETE FROM sign_in_attempts;
      ALTER TABLE sign_in_attempts RENAME CONSTRAINT sign_in_attempts_pkey TO portal_sign_in_failures_pkey;
      ALTER TABLE sign_in_attempts RENAME COLUMN attempts TO failures;
      ALTER TABLE sign_in_attempts RENAME TO portal_sign_in_failures;
    `);
  }
}
