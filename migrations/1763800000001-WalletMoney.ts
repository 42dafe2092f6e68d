import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wallet money movement: client services with fees, FX rates, and the business records of credits, debits,
 * transfers, reversals and fundings. Each operation owns exactly one journal entry (invariant d).
 */
export class WalletMoney1763800000001 implements MigrationInterface {
  name = 'WalletMoney1763800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE SEQUENCE client_service_code_seq START 1001;
      CREATE TABLE client_services (
        id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id                   uuid NOT NULL REFERENCES clients(id),
        code                        varchar(32) NOT NULL UNIQUE DEFAULT 'CS' || nextval('client_service_code_seq')::text,
        name                        varchar(100) NOT NULL,
        service_code                varchar(32) NOT NULL,
        has_transaction_fee         boolean NOT NULL,
        transaction_fee_type        varchar(16) CHECK (transaction_fee_type IN ('FIXED', 'PERCENTAGE')),
        transaction_fee             numeric(20,4) NOT NULL DEFAULT 0,
        minimum_transaction_amount  numeric(20,4) NOT NULL,
        maximum_transaction_amount  numeric(20,4) NOT NULL,
        is_active                   smallint NOT NULL CHECK (is_active IN (0, 1)),
        settlement_account_id       uuid REFERENCES ledger_accounts(id),
        is_default_airtime          boolean NOT NULL DEFAULT false,
        created_at                  timestamptz NOT NULL DEFAULT now(),
        updated_at                  timestamptz NOT NULL DEFAULT now(),
        CHECK (minimum_transaction_amount <= maximum_transaction_amount)
      );
      CREATE INDEX client_services_client_idx ON client_services (client_id, created_at);

      -- Tiered fees: the tier whose [minimum_amount, maximum_amount] holds the amount decides the fee.
      CREATE TABLE client_service_fee_tiers (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_service_id  uuid NOT NULL REFERENCES client_services(id) ON DELETE CASCADE,
        minimum_amount     numeric(20,4) NOT NULL,
        maximum_amount     numeric(20,4) NOT NULL,
        fee_type           varchar(16) NOT NULL CHECK (fee_type IN ('FIXED', 'PERCENTAGE')),
        fee                numeric(20,4) NOT NULL CHECK (fee >= 0),
        CHECK (minimum_amount <= maximum_amount)
      );
      CREATE INDEX client_service_fee_tiers_service_idx ON client_service_fee_tiers (client_service_id, minimum_amount);

      -- rates[currency] = price of one unit of currency in base (KES per USD for base KES).
      CREATE TABLE fx_rates (
        base_currency  char(3) NOT NULL,
        currency       char(3) NOT NULL,
        buying         numeric(24,8) NOT NULL CHECK (buying > 0),
        selling        numeric(24,8) NOT NULL CHECK (selling > 0),
        source         varchar(32) NOT NULL,
        updated_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (base_currency, currency)
      );

      -- One row per merchant request that moves wallet money.
      CREATE TABLE wallet_operations (
        id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id               uuid NOT NULL REFERENCES clients(id),
        kind                    varchar(16) NOT NULL CHECK (kind IN ('CREDIT', 'DEBIT', 'TRANSFER', 'REVERSAL', 'FUNDING')),
        source_transaction_id   varchar(64),
        request_fingerprint     text,
        entry_id                bigint NOT NULL UNIQUE REFERENCES journal_entries(id),
        reverses_operation_id   uuid UNIQUE REFERENCES wallet_operations(id),
        created_at              timestamptz NOT NULL DEFAULT now()
      );
      -- Idempotency is enforced here, by the database: concurrent duplicates cannot both commit.
      CREATE UNIQUE INDEX wallet_operations_source_uq ON wallet_operations (client_id, source_transaction_id)
        WHERE source_transaction_id IS NOT NULL;

      -- One row per wallet (or system account) leg of an operation: the merchant's "transaction record".
      CREATE TABLE wallet_transactions (
        id                            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        operation_id                  uuid NOT NULL REFERENCES wallet_operations(id),
        client_id                     uuid NOT NULL REFERENCES clients(id),
        account_id                    uuid NOT NULL REFERENCES ledger_accounts(id),
        client_service_id             uuid REFERENCES client_services(id),
        transaction_type              varchar(8)  NOT NULL CHECK (transaction_type IN ('CREDIT', 'DEBIT')),
        transaction_source            varchar(32) NOT NULL,
        currency                      char(3) NOT NULL,
        transaction_amount            numeric(20,4) NOT NULL,
        transaction_fee               numeric(20,4) NOT NULL DEFAULT 0,
        previous_balance              numeric(20,4) NOT NULL,
        current_balance               numeric(20,4) NOT NULL,
        other_party_account           varchar(20),
        other_party_transaction_hash  varchar(64),
        source_transaction_id         varchar(64),
        source_transaction_data       jsonb,
        transaction_narration         varchar(255),
        transaction_date              timestamptz NOT NULL,
        original_currency             char(3),
        original_amount               numeric(20,4),
        exchange_rate                 numeric(24,8),
        created_at                    timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX wallet_transactions_account_idx ON wallet_transactions (account_id, created_at, id);
      CREATE INDEX wallet_transactions_operation_idx ON wallet_transactions (operation_id);

      -- Every business record that owns a journal entry, one row per entry it owns. Later migrations add the
      -- gateway records (payments, payouts, …) with UNION ALL; invariant (d) reads this view.
      CREATE VIEW ledger_business_records AS
        SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP VIEW ledger_business_records;
      DROP TABLE wallet_transactions; DROP TABLE wallet_operations; DROP TABLE fx_rates;
      DROP TABLE client_service_fee_tiers; DROP TABLE client_services; DROP SEQUENCE client_service_code_seq;
    `);
  }
}
