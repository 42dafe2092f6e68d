import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wallet-service schema: tenancy, the double-entry ledger, profiles, wallet types, wallets, client services,
 * FX rates and the wallet money-movement records. Reviewed by hand; see docs/ledger.md for the ledger model.
 */
export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE clients (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        code        varchar(32)  NOT NULL UNIQUE,
        name        varchar(100) NOT NULL,
        created_at  timestamptz  NOT NULL DEFAULT now()
      );

      CREATE TABLE users (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id      uuid NOT NULL REFERENCES clients(id),
        username       varchar(100) NOT NULL UNIQUE,
        password_hash  text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      );

      -- ---------------------------------------------------------------- ledger
      CREATE SEQUENCE ledger_account_number_seq START 100001;

      CREATE TABLE ledger_accounts (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id        uuid NOT NULL REFERENCES clients(id),
        account_number   varchar(20) NOT NULL UNIQUE
                         DEFAULT '1' || lpad(nextval('ledger_account_number_seq')::text, 10, '0'),
        kind             varchar(32) NOT NULL CHECK (kind IN (
                           'WALLET', 'FEE_INCOME', 'SETTLEMENT', 'FX_POSITION',
                           'IN_FLIGHT_MOBILE_MONEY', 'IN_FLIGHT_BANK', 'IN_FLIGHT_AIRTIME')),
        currency         char(3) NOT NULL,
        balance          numeric(20,4) NOT NULL DEFAULT 0,
        minimum_balance  numeric(20,4) NOT NULL DEFAULT 0,
        can_overdraw     boolean NOT NULL DEFAULT false,
        created_at       timestamptz NOT NULL DEFAULT now()
      );
      -- One system account per client, kind and currency; wallets are many.
      CREATE UNIQUE INDEX ledger_accounts_system_uq ON ledger_accounts (client_id, kind, currency) WHERE kind <> 'WALLET';
      CREATE INDEX ledger_accounts_client_idx ON ledger_accounts (client_id);

      CREATE TABLE journal_entries (
        id          bigserial PRIMARY KEY,
        client_id   uuid NOT NULL REFERENCES clients(id),
        kind        varchar(40) NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      );

      -- amount > 0 raises the account's balance, amount < 0 lowers it; an entry's postings sum to zero per currency.
      CREATE TABLE postings (
        id             bigserial PRIMARY KEY,
        entry_id       bigint NOT NULL REFERENCES journal_entries(id),
        account_id     uuid NOT NULL REFERENCES ledger_accounts(id),
        currency       char(3) NOT NULL,
        amount         numeric(20,4) NOT NULL CHECK (amount <> 0),
        balance_after  numeric(20,4) NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX postings_account_idx ON postings (account_id, id);
      CREATE INDEX postings_entry_idx ON postings (entry_id);
    `);

    // The only writer of postings and balances. One call: lock the accounts in id order (no deadlocks between
    // entries touching the same accounts), check the entry, move the balances, write the postings, check floors.
    // Lines come as two parallel arrays with one line per account (the caller merges), so every lookup is an
    // index probe on the primary key, whatever the number of accounts.
    await q.query(`
      CREATE FUNCTION ledger_post_entry(p_client_id uuid, p_kind text, p_accounts uuid[], p_amounts numeric[])
      RETURNS TABLE (entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_entry_id  bigint;
        v_found     int;
        v_bad       text;
      BEGIN
        IF cardinality(p_accounts) < 2 OR cardinality(p_accounts) <> cardinality(p_amounts)
           OR cardinality(p_accounts) <> (SELECT count(DISTINCT a) FROM unnest(p_accounts) a) THEN
          RAISE EXCEPTION 'entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
        END IF;

        SELECT count(*) INTO v_found FROM (
          SELECT 1 FROM ledger_accounts a
          WHERE a.id = ANY (p_accounts) AND a.client_id = p_client_id
          ORDER BY a.id
          FOR UPDATE
        ) locked;
        IF v_found <> cardinality(p_accounts) THEN
          RAISE EXCEPTION 'entry names an unknown account or one of another client' USING ERRCODE = 'LA001';
        END IF;

        SELECT a.currency INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        GROUP BY a.currency
        HAVING sum(l.amount) <> 0 OR bool_or(l.amount <> round(l.amount, 4) OR l.amount = 0)
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry does not balance in %', v_bad USING ERRCODE = 'LB001';
        END IF;

        INSERT INTO journal_entries (client_id, kind) VALUES (p_client_id, p_kind) RETURNING id INTO v_entry_id;

        RETURN QUERY
        WITH moved AS (
          UPDATE ledger_accounts a SET balance = a.balance + l.amount
          FROM unnest(p_accounts, p_amounts) AS l(id, amount)
          WHERE a.id = l.id
          RETURNING a.id, a.currency, l.amount, a.balance - l.amount AS before, a.balance AS after
        ), posted AS (
          INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
          SELECT v_entry_id, m.id, m.currency, m.amount, m.after FROM moved m
        )
        SELECT v_entry_id, m.id, m.amount, m.before, m.after FROM moved m;

        SELECT a.account_number INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        WHERE l.amount < 0 AND NOT a.can_overdraw AND a.balance < a.minimum_balance
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'account % would go below its minimum balance', v_bad USING ERRCODE = 'LF001', DETAIL = v_bad;
        END IF;
      END
      $fn$;
    `);

    await q.query(`
      -- ---------------------------------------------------------------- profiles, wallet types, wallets
      CREATE TABLE profiles (
        id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id              uuid NOT NULL REFERENCES clients(id),
        client_profile_id      varchar(64)  NOT NULL,
        profile_name           varchar(100) NOT NULL,
        profile_type           varchar(16)  NOT NULL CHECK (profile_type IN ('BUSINESS', 'INDIVIDUAL')),
        profile_email          varchar(100) NOT NULL,
        profile_msisdn         varchar(25)  NOT NULL,
        contact_person_name    varchar(100) NOT NULL,
        contact_person_email   varchar(100) NOT NULL,
        contact_person_msisdn  varchar(25)  NOT NULL,
        identification_number  varchar(50)  NOT NULL,
        physical_address       varchar(255) NOT NULL,
        country                varchar(64)  NOT NULL,
        description            varchar(255),
        is_active              smallint NOT NULL CHECK (is_active IN (0, 1)),
        created_at             timestamptz NOT NULL DEFAULT now(),
        updated_at             timestamptz NOT NULL DEFAULT now(),
        UNIQUE (client_id, client_profile_id)
      );

      CREATE SEQUENCE account_type_code_seq START 1001;
      CREATE TABLE account_types (
        id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id             uuid NOT NULL REFERENCES clients(id),
        code                  varchar(32) NOT NULL UNIQUE DEFAULT 'AT' || nextval('account_type_code_seq')::text,
        name                  varchar(100) NOT NULL,
        description           varchar(255),
        is_active             smallint NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1)),
        is_mandatory_account  smallint NOT NULL DEFAULT 0 CHECK (is_mandatory_account IN (0, 1)),
        is_default            smallint NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX account_types_client_idx ON account_types (client_id, created_at);

      -- A wallet is a ledger account (same id) plus what the merchant sees of it.
      CREATE TABLE wallets (
        id                  uuid PRIMARY KEY REFERENCES ledger_accounts(id),
        client_id           uuid NOT NULL REFERENCES clients(id),
        profile_id          uuid NOT NULL REFERENCES profiles(id),
        account_type_id     uuid NOT NULL REFERENCES account_types(id),
        account_name        varchar(100) NOT NULL,
        status              varchar(16) NOT NULL CHECK (status IN ('PRE_ACTIVE', 'ACTIVE', 'DORMANT', 'SUSPENDED', 'CLOSED')),
        status_description  varchar(255),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX wallets_profile_idx ON wallets (profile_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE wallets; DROP SEQUENCE account_type_code_seq; DROP TABLE account_types; DROP TABLE profiles;
      DROP FUNCTION ledger_post_entry(uuid, text, uuid[], numeric[]);
      DROP TABLE postings; DROP TABLE journal_entries; DROP TABLE ledger_accounts; DROP SEQUENCE ledger_account_number_seq;
      DROP TABLE users; DROP TABLE clients;
    `);
  }
}
