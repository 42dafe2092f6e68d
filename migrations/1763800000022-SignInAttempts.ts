import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One sign-in throttle for the portal, wallet login and POST /v1/auth (src/auth/sign-in-attempts.ts): the portal's
 * failure counts become the attempts of every sign-in, counted before the password is checked. The portal's rows
 * were counted under other keys and limits, so counting starts afresh.
 */
export class SignInAttempts1763800000022 implements MigrationInterface {
  name = 'SignInAttempts1763800000022';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE portal_sign_in_failures RENAME TO sign_in_attempts;
      ALTER TABLE sign_in_attempts RENAME COLUMN failures TO attempts;
      ALTER TABLE sign_in_attempts RENAME CONSTRAINT portal_sign_in_failures_pkey TO sign_in_attempts_pkey;
      DELETE FROM sign_in_attempts;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM sign_in_attempts;
      ALTER TABLE sign_in_attempts RENAME CONSTRAINT sign_in_attempts_pkey TO portal_sign_in_failures_pkey;
      ALTER TABLE sign_in_attempts RENAME COLUMN attempts TO failures;
      ALTER TABLE sign_in_attempts RENAME TO portal_sign_in_failures;
    `);
  }
}
