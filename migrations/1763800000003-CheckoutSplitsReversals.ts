import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Completes the collection gateway: hosted checkout sessions (whose payments are mobile-money payments),
 * split settlements distributed on the merchant's confirmation, and collection reversals.
 */
export class CheckoutSplitsReversals1763800000003 implements MigrationInterface {
  name = 'CheckoutSplitsReversals1763800000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE checkout_sessions (
        id                       bigserial PRIMARY KEY,
        checkout_reference       varchar(40) NOT NULL UNIQUE,
        client_id                uuid NOT NULL REFERENCES clients(id),
        client_service_id        uuid NOT NULL REFERENCES client_services(id),
        merchant_transaction_id  varchar(64) NOT NULL,
        request_fingerprint      text NOT NULL,
        amount                   numeric(20,4) NOT NULL,
        currency                 char(3) NOT NULL,
        payer_name               varchar(100) NOT NULL,
        payer_email              varchar(100) NOT NULL,
        payer_msisdn             varchar(25) NOT NULL,
        account_number           varchar(50) NOT NULL,
        narration                varchar(255) NOT NULL,
        callback_url             varchar(500) NOT NULL,
        redirect_url             varchar(500) NOT NULL,
        extra_data               jsonb NOT NULL DEFAULT '{}',
        split_settlements        jsonb,
        status                   smallint NOT NULL DEFAULT 803 CHECK (status IN (801, 802, 803, 820, 840, 841, 850, 851)),
        expires_at               timestamptz NOT NULL,
        created_at               timestamptz NOT NULL DEFAULT now(),
        updated_at               timestamptz NOT NULL DEFAULT now(),
        UNIQUE (client_id, merchant_transaction_id)
      );

      -- A checkout's payments are payments too; they share its merchant_transaction_id as external_reference,
      -- so the merchant's uniqueness now applies to direct charges only.
      ALTER TABLE payments ADD COLUMN checkout_session_id bigint REFERENCES checkout_sessions(id);
      ALTER TABLE payments DROP CONSTRAINT payments_client_id_external_reference_key;
      CREATE UNIQUE INDEX payments_charge_reference_uq ON payments (client_id, external_reference) WHERE checkout_session_id IS NULL;
      CREATE INDEX payments_checkout_idx ON payments (checkout_session_id) WHERE checkout_session_id IS NOT NULL;

      -- Split settlements: validated at acceptance, distributed (one entry) or declined once, on confirmation.
      ALTER TABLE payments ADD COLUMN split_settlements jsonb;
      ALTER TABLE payments ADD COLUMN split_status varchar(16) CHECK (split_status IN ('DISTRIBUTED', 'DECLINED'));
      ALTER TABLE payments ADD COLUMN split_entry_id bigint UNIQUE REFERENCES journal_entries(id);
      ALTER TABLE payments ADD COLUMN acknowledged_at timestamptz;

      -- Partner wallets that must receive a share of every split-settled payment on a service.
      CREATE TABLE client_service_partners (
        client_service_id  uuid NOT NULL REFERENCES client_services(id) ON DELETE CASCADE,
        account_id         uuid NOT NULL REFERENCES ledger_accounts(id),
        created_at         timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (client_service_id, account_id)
      );

      CREATE TABLE collection_reversals (
        id                       bigserial PRIMARY KEY,
        client_id                uuid NOT NULL REFERENCES clients(id),
        reversal_reference       varchar(64) NOT NULL,
        payment_id               bigint NOT NULL REFERENCES payments(id),
        reversal_reason          varchar(255) NOT NULL,
        status                   varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'successful', 'failed')),
        failure_reason           varchar(255),
        provider_transaction_id  varchar(64),
        -- Booked before the payer is refunded; if the operator then refuses, a compensating entry re-books it.
        entry_id                 bigint UNIQUE REFERENCES journal_entries(id),
        compensation_entry_id    bigint UNIQUE REFERENCES journal_entries(id),
        created_at               timestamptz NOT NULL DEFAULT now(),
        completed_at             timestamptz,
        UNIQUE (client_id, reversal_reference)
      );
      -- One live reversal per payment; a failed one does not stop a new attempt.
      CREATE UNIQUE INDEX collection_reversals_payment_uq ON collection_reversals (payment_id) WHERE status <> 'failed';

      CREATE OR REPLACE VIEW ledger_business_records AS
        SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations
        UNION ALL
        SELECT 'payment', id::text, entry_id FROM payments WHERE entry_id IS NOT NULL
        UNION ALL
        SELECT 'payment_split', id::text, split_entry_id FROM payments WHERE split_entry_id IS NOT NULL
        UNION ALL
        SELECT 'collection_reversal', id::text, entry_id FROM collection_reversals WHERE entry_id IS NOT NULL
        UNION ALL
        SELECT 'collection_reversal_compensation', id::text, compensation_entry_id FROM collection_reversals
        WHERE compensation_entry_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE VIEW ledger_business_records AS
        SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations
        UNION ALL
        SELECT 'payment', id::text, entry_id FROM payments WHERE entry_id IS NOT NULL;
      DROP TABLE collection_reversals; DROP TABLE client_service_partners;
      ALTER TABLE payments DROP COLUMN acknowledged_at, DROP COLUMN split_entry_id, DROP COLUMN split_status, DROP COLUMN split_settlements;
      DROP INDEX payments_checkout_idx; DROP INDEX payments_charge_reference_uq;
      ALTER TABLE payments ADD CONSTRAINT payments_client_id_external_reference_key UNIQUE (client_id, external_reference);
      ALTER TABLE payments DROP COLUMN checkout_session_id;
      DROP TABLE checkout_sessions;
    `);
  }
}
