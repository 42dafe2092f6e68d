import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Low-balance alerts on floats (issue 34): a merchant's threshold per float (a settlement wallet some service pays
 * from) and the alert's state. `low` is set when the available balance falls below the threshold (the alert fires)
 * and cleared once it is back at `rearm_at`, the threshold plus 10% (hysteresis, docs/decisions.md). SQL function
 * float_low_balance_follow (a function source) keeps it, called by the posting core with every balance it moves.
 */
export class FloatAlerts1763800000038 implements MigrationInterface {
  name = 'FloatAlerts1763800000038';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE float_alerts (
        client_id      uuid NOT NULL REFERENCES clients(id),
        account_id     uuid NOT NULL REFERENCES ledger_accounts(id),
        threshold      numeric(20,4) NOT NULL CHECK (threshold > 0),
        rearm_at       numeric(20,4) GENERATED ALWAYS AS (round(threshold * 1.1, 4)) STORED,
        minor_units    smallint NOT NULL CHECK (minor_units BETWEEN 0 AND 4),
        contact_msisdn varchar(25),
        low            boolean NOT NULL,
        alerts         integer NOT NULL DEFAULT 0,
        changed_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (client_id, account_id)
      )
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE float_alerts`);
  }
}
