import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The asynchronous gateway engine: API keys, callback settings, the transactional outbox, mobile-money payments
 * and callback deliveries with their attempts.
 */
export class GatewayEngine1763800000002 implements MigrationInterface {
  name = 'GatewayEngine1763800000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_keys (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id      uuid NOT NULL REFERENCES clients(id),
        consumer_key   varchar(64) NOT NULL UNIQUE,
        secret_hash    text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        revoked_at     timestamptz
      );
      CREATE INDEX api_keys_client_idx ON api_keys (client_id);

      -- What we need to call the merchant back. Password and signing secret must be usable, so they are stored
      -- encrypted (AES-256-GCM, key derived from JWT_SECRET), not hashed.
      CREATE TABLE client_callback_settings (
        client_id                uuid PRIMARY KEY REFERENCES clients(id),
        url                      varchar(500),
        username                 varchar(100),
        password_encrypted       text,
        signing_secret_encrypted text NOT NULL,
        updated_at               timestamptz NOT NULL DEFAULT now()
      );

      -- Transactional outbox: written in the same transaction as the state change it follows; the relay moves
      -- due rows to BullMQ and a finished job marks its row done. Jobs carry ids only; workers reload state and
      -- act idempotently, so a job relayed twice does no harm.
      CREATE TABLE outbox (
        id            bigserial PRIMARY KEY,
        topic         varchar(64) NOT NULL,
        payload       jsonb NOT NULL,
        available_at  timestamptz NOT NULL DEFAULT now(),
        relayed_at    timestamptz,
        relay_count   integer NOT NULL DEFAULT 0,
        -- Names the row's BullMQ jobs: unique across databases, since several may share one Redis.
        job_key       uuid NOT NULL DEFAULT gen_random_uuid(),
        done_at       timestamptz,
        created_at    timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX outbox_due_idx ON outbox (available_at, id) WHERE relayed_at IS NULL;
      -- Relayed but never reported done: the job was lost (Redis restarted empty) and is relayed again.
      CREATE INDEX outbox_unfinished_idx ON outbox (relayed_at) WHERE relayed_at IS NOT NULL AND done_at IS NULL;

      -- A mobile-money payment: a direct charge (and, later, a hosted-checkout payment). Its id is the
      -- charge_request_id, the payment_id and the transaction_id merchants see.
      CREATE TABLE payments (
        id                      bigserial PRIMARY KEY,
        client_id               uuid NOT NULL REFERENCES clients(id),
        client_service_id       uuid NOT NULL REFERENCES client_services(id),
        external_reference      varchar(64) NOT NULL,
        request_fingerprint     text NOT NULL,
        origin_channel_code     varchar(8) NOT NULL,
        originator_msisdn       varchar(25) NOT NULL,
        payer_msisdn            varchar(25) NOT NULL,
        payer_name              varchar(100),
        payer_email             varchar(100) NOT NULL,
        account_number          varchar(50) NOT NULL,
        invoice_number          varchar(50) NOT NULL,
        currency                char(3) NOT NULL,
        country_code            char(3) NOT NULL,
        service_amount          numeric(20,4) NOT NULL,
        transaction_charge      numeric(20,4) NOT NULL,
        total_amount            numeric(20,4) NOT NULL,
        merchant_fee            numeric(20,4) NOT NULL,
        add_transaction_charge  boolean NOT NULL,
        payment_method_code     varchar(32) NOT NULL,
        extra_data              jsonb NOT NULL,
        description             varchar(255) NOT NULL,
        notify_client           boolean NOT NULL,
        notify_originator       boolean NOT NULL,
        callback_url            varchar(500) NOT NULL,
        next_step               varchar(32),
        payment_url             varchar(500),
        otp_failures            smallint NOT NULL DEFAULT 0,
        otp_verified_at         timestamptz,
        payment_status          smallint NOT NULL DEFAULT 703 CHECK (payment_status BETWEEN 700 AND 708),
        payer_transaction_id    varchar(64),
        entry_id                bigint UNIQUE REFERENCES journal_entries(id),
        settled_at              timestamptz,
        created_at              timestamptz NOT NULL DEFAULT now(),
        updated_at              timestamptz NOT NULL DEFAULT now(),
        UNIQUE (client_id, external_reference)
      );
      CREATE INDEX payments_client_created_idx ON payments (client_id, created_at, id);

      -- One row per event to deliver to one URL; its id is the X-Event-Id, stable across retries.
      CREATE TABLE callback_deliveries (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id        uuid NOT NULL REFERENCES clients(id),
        event            varchar(64) NOT NULL,
        reference        varchar(64) NOT NULL,
        url              varchar(500) NOT NULL,
        payload          jsonb NOT NULL,
        status           varchar(16) NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
        attempts         smallint NOT NULL DEFAULT 0,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        lease_until      timestamptz,
        first_attempt_at timestamptz,
        acknowledgement  jsonb,
        created_at       timestamptz NOT NULL DEFAULT now(),
        completed_at     timestamptz
      );
      CREATE INDEX callback_deliveries_reference_idx ON callback_deliveries (client_id, reference, created_at);

      CREATE TABLE callback_attempts (
        id           bigserial PRIMARY KEY,
        delivery_id  uuid NOT NULL REFERENCES callback_deliveries(id),
        attempt      smallint NOT NULL,
        attempted_at timestamptz NOT NULL,
        http_status  smallint,
        latency_ms   integer NOT NULL,
        error        varchar(255)
      );
      CREATE INDEX callback_attempts_delivery_idx ON callback_attempts (delivery_id, attempt);

      CREATE OR REPLACE VIEW ledger_business_records AS
        SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations
        UNION ALL
        SELECT 'payment', id::text, entry_id FROM payments WHERE entry_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE VIEW ledger_business_records AS
        SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations;
      DROP TABLE callback_attempts; DROP TABLE callback_deliveries; DROP TABLE payments; DROP TABLE outbox;
      DROP TABLE client_callback_settings; DROP TABLE api_keys;
    `);
  }
}
