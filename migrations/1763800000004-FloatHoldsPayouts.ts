import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The disbursement gateway's money side: two-phase holds on a client service's float (used by payouts, IMT, B2B
 * and airtime), the payouts themselves (one reference namespace per client for LOCAL, IMT and B2B), and the
 * recipient notifications (SMS) sent after a payout.
 */
export class FloatHoldsPayouts1763800000004 implements MigrationInterface {
  name = 'FloatHoldsPayouts1763800000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- One reserve entry (float → rail in-flight account) per reservation; one hold per paid line.
      CREATE TABLE float_reservations (
        id                bigserial PRIMARY KEY,
        client_id         uuid NOT NULL REFERENCES clients(id),
        float_account_id  uuid NOT NULL REFERENCES ledger_accounts(id),
        rail              varchar(32) NOT NULL CHECK (rail IN ('IN_FLIGHT_MOBILE_MONEY', 'IN_FLIGHT_BANK', 'IN_FLIGHT_AIRTIME')),
        currency          char(3) NOT NULL,
        reserve_entry_id  bigint NOT NULL UNIQUE REFERENCES journal_entries(id),
        created_at        timestamptz NOT NULL DEFAULT now()
      );

      -- Exactly one outcome per hold: SETTLED (to the outside world) or RELEASED (back to the float), one entry each.
      CREATE TABLE float_holds (
        id                bigserial PRIMARY KEY,
        reservation_id    bigint NOT NULL REFERENCES float_reservations(id),
        client_id         uuid NOT NULL REFERENCES clients(id),
        float_account_id  uuid NOT NULL REFERENCES ledger_accounts(id),
        amount            numeric(20,4) NOT NULL CHECK (amount > 0),
        fee               numeric(20,4) NOT NULL CHECK (fee >= 0),
        status            varchar(8) NOT NULL DEFAULT 'HELD' CHECK (status IN ('HELD', 'SETTLED', 'RELEASED')),
        outcome_entry_id  bigint UNIQUE REFERENCES journal_entries(id),
        resolved_at       timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now(),
        CHECK ((status = 'HELD') = (outcome_entry_id IS NULL)),
        CHECK ((status = 'HELD') = (resolved_at IS NULL))
      );
      CREATE INDEX float_holds_reservation_idx ON float_holds (reservation_id);
      CREATE INDEX float_holds_held_idx ON float_holds (float_account_id) WHERE status = 'HELD';

      CREATE TABLE payouts (
        id                        bigserial PRIMARY KEY,
        client_id                 uuid NOT NULL REFERENCES clients(id),
        kind                      varchar(8) NOT NULL CHECK (kind IN ('LOCAL', 'IMT', 'B2B')),
        payout_reference          varchar(64) NOT NULL,
        client_service_id         uuid NOT NULL REFERENCES client_services(id),
        -- The service's float at acceptance. Its foreign key takes KEY SHARE on the float row before the reservation
        -- locks it; ledger_post_entry locks FOR NO KEY UPDATE (migration ...08), which does not conflict with that.
        float_account_id          uuid NOT NULL REFERENCES ledger_accounts(id),
        -- Set in the accepting transaction, right after the row is claimed (the row first, so a duplicate waits on it).
        hold_id                   bigint UNIQUE REFERENCES float_holds(id),
        amount                    numeric(20,4) NOT NULL CHECK (amount > 0),
        fee                       numeric(20,4) NOT NULL CHECK (fee >= 0),
        currency                  char(3) NOT NULL,
        -- 703 from acceptance until the rail answers; 705 (refunded) is B2B only.
        status                    smallint NOT NULL DEFAULT 703 CHECK (status IN (700, 701, 702, 703, 704, 705)),
        destination_type          varchar(24) NOT NULL,
        destination_name          varchar(32) NOT NULL,
        recipient_account_number  varchar(64) NOT NULL,
        recipient_phone_number    varchar(25),
        recipient_bank_code       varchar(11),
        request                   jsonb NOT NULL,
        callback_url              varchar(500) NOT NULL,
        rail_reference            varchar(64),
        result_description        varchar(255),
        -- The float's ledger balance after this payout's last movement on it (reserve, or release on failure).
        float_balance_after       numeric(20,4),
        transaction_time          timestamptz,
        -- When the rail was last asked (submission or re-query); NULL until first submitted.
        checked_at                timestamptz,
        created_at                timestamptz NOT NULL DEFAULT now(),
        updated_at                timestamptz NOT NULL DEFAULT now(),
        UNIQUE (client_id, payout_reference)
      );
      -- The reconciliation job's scan: submitted payouts still pending or jammed, oldest check first.
      CREATE INDEX payouts_unresolved_idx ON payouts (checked_at) WHERE status IN (703, 704);

      -- Messages to recipients, written with the status change that causes them and sent by the outbox.
      CREATE TABLE notifications (
        id                 bigserial PRIMARY KEY,
        client_id          uuid NOT NULL REFERENCES clients(id),
        reference          varchar(64) NOT NULL,
        channel            varchar(8) NOT NULL CHECK (channel IN ('SMS')),
        recipient          varchar(25) NOT NULL,
        message            varchar(480) NOT NULL,
        status             varchar(8) NOT NULL DEFAULT 'QUEUED' CHECK (status IN ('QUEUED', 'SENT', 'FAILED')),
        provider_reference varchar(64),
        created_at         timestamptz NOT NULL DEFAULT now(),
        sent_at            timestamptz,
        UNIQUE (client_id, reference, channel)
      );
    `);
    await q.query(LEDGER_BUSINESS_RECORDS_WITH_HOLDS);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(LEDGER_BUSINESS_RECORDS_BEFORE);
    await q.query(`DROP TABLE notifications; DROP TABLE payouts; DROP TABLE float_holds; DROP TABLE float_reservations;`);
  }
}

const COLLECTION_RECORDS = `
  SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id FROM wallet_operations
  UNION ALL
  SELECT 'payment', id::text, entry_id FROM payments WHERE entry_id IS NOT NULL
  UNION ALL
  SELECT 'payment_split', id::text, split_entry_id FROM payments WHERE split_entry_id IS NOT NULL
  UNION ALL
  SELECT 'collection_reversal', id::text, entry_id FROM collection_reversals WHERE entry_id IS NOT NULL
  UNION ALL
  SELECT 'collection_reversal_compensation', id::text, compensation_entry_id FROM collection_reversals
  WHERE compensation_entry_id IS NOT NULL`;

const LEDGER_BUSINESS_RECORDS_BEFORE = `CREATE OR REPLACE VIEW ledger_business_records AS ${COLLECTION_RECORDS};`;

// A reservation owns its reserve entry; each hold owns its outcome entry (settle or release), so every payout and
// airtime recipient is covered by invariant (d).
const LEDGER_BUSINESS_RECORDS_WITH_HOLDS = `CREATE OR REPLACE VIEW ledger_business_records AS ${COLLECTION_RECORDS}
  UNION ALL
  SELECT 'float_reservation', id::text, reserve_entry_id FROM float_reservations
  UNION ALL
  SELECT 'float_hold', id::text, outcome_entry_id FROM float_holds WHERE outcome_entry_id IS NOT NULL;`;
