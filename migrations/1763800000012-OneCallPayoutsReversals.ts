import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payout acceptance (local, IMT, B2B), bulk airtime acceptance and wallet reversals each become one SQL function,
 * called once per request: the checks, the idempotency claim, the ledger entry (through ledger_post_entry, still the
 * only writer of postings and balances) and the records run inside Postgres, so no request holds a float's or a
 * wallet's row lock across client round trips. The functions answer refusals as rows (outcome + what the answer's
 * wording needs) rather than errors, except where work already done must be undone (a wallet reversal's floor or
 * closed wallet, a reference taken meanwhile), which raise and roll the call back.
 */
export class OneCallPayoutsReversals1763800000012 implements MigrationInterface {
  name = 'OneCallPayoutsReversals1763800000012';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- LedgerService.systemAccount in SQL: the client's system account of a kind and currency, created on first use.
      CREATE FUNCTION ledger_system_account(p_client_id uuid, p_kind text, p_currency text) RETURNS uuid
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_id uuid;
      BEGIN
        -- kind <> 'WALLET' lets the partial unique index serve the lookup.
        SELECT a.id INTO v_id FROM ledger_accounts a
        WHERE a.client_id = p_client_id AND a.kind = p_kind AND a.currency = p_currency AND a.kind <> 'WALLET';
        IF v_id IS NULL THEN
          INSERT INTO ledger_accounts (client_id, kind, currency, can_overdraw) VALUES (p_client_id, p_kind, p_currency, true)
          ON CONFLICT (client_id, kind, currency) WHERE kind <> 'WALLET' DO NOTHING
          RETURNING id INTO v_id;
          IF v_id IS NULL THEN -- created meanwhile by a transaction that has committed since
            SELECT a.id INTO v_id FROM ledger_accounts a
            WHERE a.client_id = p_client_id AND a.kind = p_kind AND a.currency = p_currency AND a.kind <> 'WALLET';
          END IF;
        END IF;
        RETURN v_id;
      END
      $fn$;

      -- LedgerService.reverseEntry in SQL: the exact negation of one of the client's entries, as a new entry of p_kind.
      CREATE FUNCTION ledger_reverse_entry(p_client_id uuid, p_entry_id bigint, p_kind text)
      RETURNS TABLE (entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_accounts uuid[];
        v_amounts  numeric[];
      BEGIN
        SELECT array_agg(p.account_id ORDER BY p.id), array_agg(-p.amount ORDER BY p.id) INTO v_accounts, v_amounts
        FROM postings p JOIN journal_entries e ON e.id = p.entry_id
        WHERE p.entry_id = p_entry_id AND e.client_id = p_client_id;
        IF v_accounts IS NULL THEN
          RAISE EXCEPTION 'no entry % of this client', p_entry_id USING ERRCODE = 'LE001';
        END IF;
        RETURN QUERY SELECT * FROM ledger_post_entry(p_client_id, p_kind, v_accounts, v_amounts);
      END
      $fn$;

      -- The service a disbursement is paid from (src/float/paying-service.ts words the refusals): one of the client's,
      -- active, with a float (its settlement wallet) that may pay: a wallet of an active profile in one of
      -- p_paying_states, which the application's state machine gives (src/wallets/wallet-state-machine.ts).
      CREATE FUNCTION paying_service(p_client_id uuid, p_service_code text, p_paying_states text[])
      RETURNS TABLE (refusal text, service_id uuid, float_account_id uuid, float_currency text, minimum_amount numeric,
                     maximum_amount numeric)
      LANGUAGE sql STABLE AS $fn$
        SELECT CASE
                 WHEN s.id IS NULL OR s.is_active <> 1 THEN 'SERVICE_NOT_ALLOWED'
                 WHEN f.id IS NULL THEN 'NO_FLOAT'
                 WHEN w.status IS NULL OR w.status <> ALL (p_paying_states) OR p.is_active <> 1 THEN 'FLOAT_NOT_ACTIVE'
               END,
               s.id, f.id, f.currency::text, s.minimum_transaction_amount, s.maximum_transaction_amount
        FROM (VALUES (1)) AS one (x)
        LEFT JOIN client_services s ON s.client_id = p_client_id AND s.code = p_service_code
        LEFT JOIN ledger_accounts f ON f.id = s.settlement_account_id
        LEFT JOIN wallets w ON w.id = f.id
        LEFT JOIN profiles p ON p.id = w.profile_id
      $fn$;

      -- FloatHoldsService.reserve in SQL: one FLOAT_RESERVE entry moving sum(amount + fee) from the float to the rail's
      -- in-flight account, its reservation, and one hold per line (hold_ids in line order). A float that does not cover
      -- it raises LF001 from ledger_post_entry.
      CREATE FUNCTION float_reserve(p_client_id uuid, p_float_account_id uuid, p_currency text, p_rail text,
                                    p_amounts numeric[], p_fees numeric[])
      RETURNS TABLE (reservation_id bigint, entry_id bigint, hold_ids bigint[], float_balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_in_flight   uuid;
        v_total       numeric;
        v_entry_id    bigint;
        v_after       numeric;
        v_reservation bigint;
        v_holds       bigint[];
      BEGIN
        IF coalesce(cardinality(p_amounts), 0) = 0 OR cardinality(p_amounts) <> cardinality(p_fees) THEN
          RAISE EXCEPTION 'a reservation needs one fee per amount and at least one line';
        END IF;
        v_in_flight := ledger_system_account(p_client_id, p_rail, p_currency);
        SELECT sum(l.amount + l.fee) INTO v_total FROM unnest(p_amounts, p_fees) AS l (amount, fee);
        SELECT e.entry_id, e.balance_after INTO v_entry_id, v_after
        FROM ledger_post_entry(p_client_id, 'FLOAT_RESERVE', ARRAY[p_float_account_id, v_in_flight], ARRAY[-v_total, v_total]) e
        WHERE e.account_id = p_float_account_id;
        INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
        VALUES (p_client_id, p_float_account_id, p_rail, p_currency, v_entry_id)
        RETURNING id INTO v_reservation;
        -- Ids are drawn in insertion order, which follows the lines.
        WITH held AS (
          INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee)
          SELECT v_reservation, p_client_id, p_float_account_id, l.amount, l.fee
          FROM unnest(p_amounts, p_fees) WITH ORDINALITY AS l (amount, fee, n)
          ORDER BY l.n
          RETURNING id
        )
        SELECT array_agg(held.id ORDER BY held.id) INTO v_holds FROM held;
        RETURN QUERY SELECT v_reservation, v_entry_id, v_holds, v_after;
      END
      $fn$;

      -- Accepts a local payout, IMT or B2B (PayoutRequestsService): the paying service's checks, then the reference
      -- claimed first (a concurrent duplicate waits on the unique key and finds it taken before touching the float),
      -- the reservation, the payout's hold and its processing job. Outcomes: ACCEPTED, DUPLICATE, INSUFFICIENT_FLOAT, a
      -- paying_service refusal, CURRENCY, AMOUNT_OUT_OF_BOUNDS; only ACCEPTED leaves anything behind.
      CREATE FUNCTION payout_accept(
        p_client_id uuid, p_service_code text, p_kind text, p_reference text, p_amount numeric, p_currency text,
        p_destination_type text, p_destination_name text, p_recipient_account_number text,
        p_recipient_phone_number text, p_recipient_bank_code text, p_request jsonb, p_callback_url text, p_rail text,
        p_topic text, p_process_at timestamptz, p_paying_states text[])
      RETURNS TABLE (outcome text, fee numeric, float_currency text, minimum_amount numeric, maximum_amount numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_service  record;
        v_fee      numeric;
        v_payout   bigint;
        v_reserved record;
      BEGIN
        SELECT * INTO v_service FROM paying_service(p_client_id, p_service_code, p_paying_states);
        float_currency := v_service.float_currency;
        minimum_amount := v_service.minimum_amount;
        maximum_amount := v_service.maximum_amount;
        outcome := coalesce(v_service.refusal, CASE
          WHEN v_service.float_currency <> p_currency THEN 'CURRENCY'
          WHEN p_amount NOT BETWEEN v_service.minimum_amount AND v_service.maximum_amount THEN 'AMOUNT_OUT_OF_BOUNDS'
        END);
        IF outcome IS NOT NULL THEN
          RETURN NEXT;
          RETURN;
        END IF;
        v_fee := client_service_fee(v_service.service_id, p_amount);
        fee := v_fee;
        -- A block of its own, so that a float short of amount + fee undoes the claim and answers as a row.
        BEGIN
          INSERT INTO payouts (client_id, kind, payout_reference, client_service_id, float_account_id, amount, fee, currency,
            destination_type, destination_name, recipient_account_number, recipient_phone_number, recipient_bank_code, request,
            callback_url)
          VALUES (p_client_id, p_kind, p_reference, v_service.service_id, v_service.float_account_id, p_amount, v_fee,
            p_currency, p_destination_type, p_destination_name, p_recipient_account_number, p_recipient_phone_number,
            p_recipient_bank_code, p_request, p_callback_url)
          ON CONFLICT (client_id, payout_reference) DO NOTHING
          RETURNING id INTO v_payout;
          IF v_payout IS NULL THEN
            outcome := 'DUPLICATE';
          ELSE
            SELECT * INTO v_reserved
            FROM float_reserve(p_client_id, v_service.float_account_id, p_currency, p_rail, ARRAY[p_amount], ARRAY[v_fee]);
            UPDATE payouts SET hold_id = v_reserved.hold_ids[1], float_balance_after = v_reserved.float_balance_after
            WHERE id = v_payout;
            INSERT INTO outbox (topic, payload, available_at)
            VALUES (p_topic, jsonb_build_object('payoutId', v_payout::text), p_process_at);
            outcome := 'ACCEPTED';
          END IF;
        EXCEPTION WHEN SQLSTATE 'LF001' THEN
          outcome := 'INSUFFICIENT_FLOAT';
        END;
        RETURN NEXT;
      END
      $fn$;

      -- Accepts a bulk airtime request (AirtimeService): a reference already taken, then the paying service (the
      -- client's default airtime service when none is named) and each recipient's amount against its bounds, then the
      -- claim, one reservation of the total with a hold per recipient, the recipients and one processing job per
      -- p_recipients_per_job positions. Outcomes: ACCEPTED, DUPLICATE, NO_DEFAULT_SERVICE, a paying_service refusal,
      -- AMOUNT_OUT_OF_BOUNDS (recipient_index from 0), INSUFFICIENT_FLOAT; only ACCEPTED leaves anything behind.
      CREATE FUNCTION airtime_accept(
        p_client_id uuid, p_reference text, p_service_code text, p_phone_numbers text[], p_amounts numeric[],
        p_message text, p_topic text, p_recipients_per_job int, p_process_at timestamptz, p_paying_states text[])
      RETURNS TABLE (outcome text, service_code text, recipient_index int, minimum_amount numeric, maximum_amount numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_service  record;
        v_fees     numeric[];
        v_request  bigint;
        v_reserved record;
        v_count    int := cardinality(p_amounts);
      BEGIN
        IF EXISTS (SELECT 1 FROM airtime_requests q WHERE q.client_id = p_client_id AND q.reference = p_reference) THEN
          outcome := 'DUPLICATE';
          RETURN NEXT;
          RETURN;
        END IF;
        service_code := coalesce(p_service_code, (
          SELECT s.code FROM client_services s WHERE s.client_id = p_client_id AND s.is_default_airtime
          ORDER BY s.created_at LIMIT 1));
        IF service_code IS NULL THEN
          outcome := 'NO_DEFAULT_SERVICE';
          RETURN NEXT;
          RETURN;
        END IF;
        SELECT * INTO v_service FROM paying_service(p_client_id, service_code, p_paying_states);
        minimum_amount := v_service.minimum_amount;
        maximum_amount := v_service.maximum_amount;
        outcome := v_service.refusal;
        IF outcome IS NULL THEN
          SELECT l.n - 1 INTO recipient_index FROM unnest(p_amounts) WITH ORDINALITY AS l (amount, n)
          WHERE l.amount NOT BETWEEN v_service.minimum_amount AND v_service.maximum_amount
          ORDER BY l.n LIMIT 1;
          IF recipient_index IS NOT NULL THEN outcome := 'AMOUNT_OUT_OF_BOUNDS'; END IF;
        END IF;
        IF outcome IS NOT NULL THEN
          RETURN NEXT;
          RETURN;
        END IF;
        SELECT array_agg(client_service_fee(v_service.service_id, l.amount) ORDER BY l.n) INTO v_fees
        FROM unnest(p_amounts) WITH ORDINALITY AS l (amount, n);
        -- A block of its own, so that a float short of the total undoes the claim and answers as a row.
        BEGIN
          INSERT INTO airtime_requests (client_id, reference, client_service_id, currency, recipient_count)
          VALUES (p_client_id, p_reference, v_service.service_id, v_service.float_currency, v_count)
          ON CONFLICT (client_id, reference) DO NOTHING
          RETURNING id INTO v_request;
          IF v_request IS NULL THEN
            outcome := 'DUPLICATE';
          ELSE
            SELECT * INTO v_reserved
            FROM float_reserve(p_client_id, v_service.float_account_id, v_service.float_currency, 'IN_FLIGHT_AIRTIME',
                               p_amounts, v_fees);
            UPDATE airtime_requests SET reservation_id = v_reserved.reservation_id WHERE id = v_request;
            INSERT INTO airtime_recipients (request_id, position, phone_number, amount, fee, hold_id, message)
            SELECT v_request, r.n, r.phone_number, r.amount, r.fee, r.hold_id, p_message
            FROM unnest(p_phone_numbers, p_amounts, v_fees, v_reserved.hold_ids) WITH ORDINALITY
              AS r (phone_number, amount, fee, hold_id, n);
            INSERT INTO outbox (topic, payload, available_at)
            SELECT p_topic,
                   jsonb_build_object('requestId', v_request::text, 'first', f::text,
                                      'last', least(v_count, f + p_recipients_per_job - 1)::text),
                   p_process_at
            FROM generate_series(1, v_count, p_recipients_per_job) AS f;
            outcome := 'ACCEPTED';
          END IF;
        EXCEPTION WHEN SQLSTATE 'LF001' THEN
          outcome := 'INSUFFICIENT_FLOAT';
        END;
        RETURN NEXT;
      END
      $fn$;

      -- A wallet operation's records as TransactionRecords reads them (the TransactionRow fields).
      CREATE FUNCTION wallet_operation_rows(p_operation_id uuid)
      RETURNS TABLE (id uuid, operation_id uuid, operation_kind text, account_id uuid, account_number text, account_kind text,
        client_service_code text, transaction_type text, transaction_source text, currency text, transaction_amount numeric,
        transaction_fee numeric, previous_balance numeric, current_balance numeric, other_party_account text,
        other_party_transaction_hash text, source_transaction_id text, source_transaction_data jsonb,
        transaction_narration text, transaction_date timestamptz, original_currency text, original_amount numeric,
        exchange_rate numeric)
      LANGUAGE sql STABLE AS $fn$
        SELECT t.id, t.operation_id, o.kind::text, t.account_id, a.account_number::text, a.kind::text, s.code::text,
          t.transaction_type::text, t.transaction_source::text, t.currency::text, t.transaction_amount, t.transaction_fee,
          t.previous_balance, t.current_balance, t.other_party_account::text, t.other_party_transaction_hash::text,
          t.source_transaction_id::text, t.source_transaction_data, t.transaction_narration::text, t.transaction_date,
          t.original_currency::text, t.original_amount, t.exchange_rate
        FROM wallet_transactions t
        JOIN wallet_operations o ON o.id = t.operation_id
        JOIN ledger_accounts a ON a.id = t.account_id
        LEFT JOIN client_services s ON s.id = t.client_service_id
        WHERE t.operation_id = p_operation_id
        ORDER BY t.transaction_type = 'CREDIT', t.id
      $fn$;

      -- Reverses a credit, debit, transfer or funding (ReversalsService): the reference's replay or reuse first, then
      -- the record, a lock on the original operation (concurrent reversals of it queue there), the reversing entry (the
      -- exact negation, floors apply), and one mirrored record per original one, plus the settlement side when the
      -- original had one wallet. Outcomes as rows: REVERSED, REPLAY (with the records), REFERENCE_REUSED, NOT_FOUND,
      -- REVERSAL_OF_REVERSAL, NOT_REVERSIBLE, ALREADY_REVERSED. Raises (undoing everything) LF001 for a floor, WC001
      -- (detail: the account number) for a CLOSED wallet, 23505 for a reference another request took meanwhile.
      CREATE FUNCTION wallet_reverse(p_client_id uuid, p_transaction_id uuid, p_reference text, p_fingerprint text,
                                     p_narration text)
      RETURNS TABLE (outcome text, id uuid, operation_id uuid, operation_kind text, account_id uuid, account_number text,
        account_kind text, client_service_code text, transaction_type text, transaction_source text, currency text,
        transaction_amount numeric, transaction_fee numeric, previous_balance numeric, current_balance numeric,
        other_party_account text, other_party_transaction_hash text, source_transaction_id text,
        source_transaction_data jsonb, transaction_narration text, transaction_date timestamptz, original_currency text,
        original_amount numeric, exchange_rate numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_known     record;
        v_target    record;
        v_entry     bigint;
        v_accounts  uuid[];
        v_amounts   numeric[];
        v_afters    numeric[];
        v_operation uuid;
        v_closed    text;
        v_leg_ids   uuid[] := ARRAY[gen_random_uuid(), gen_random_uuid()];
        v_other_leg uuid := gen_random_uuid();
      BEGIN
        IF p_reference IS NOT NULL THEN
          SELECT o.id, o.kind, o.request_fingerprint INTO v_known FROM wallet_operations o
          WHERE o.client_id = p_client_id AND o.source_transaction_id = p_reference;
          IF FOUND THEN
            IF v_known.kind <> 'REVERSAL' OR v_known.request_fingerprint IS DISTINCT FROM p_fingerprint THEN
              outcome := 'REFERENCE_REUSED';
              RETURN NEXT;
            ELSE
              RETURN QUERY SELECT 'REPLAY', r.* FROM wallet_operation_rows(v_known.id) r;
            END IF;
            RETURN;
          END IF;
        END IF;

        SELECT o.id, o.kind, o.entry_id INTO v_target
        FROM wallet_transactions t JOIN wallet_operations o ON o.id = t.operation_id
        WHERE t.client_id = p_client_id AND t.id = p_transaction_id;
        outcome := CASE
          WHEN v_target.id IS NULL THEN 'NOT_FOUND'
          WHEN v_target.kind = 'REVERSAL' THEN 'REVERSAL_OF_REVERSAL'
          WHEN v_target.kind NOT IN ('CREDIT', 'DEBIT', 'TRANSFER', 'FUNDING') THEN 'NOT_REVERSIBLE'
        END;
        IF outcome IS NOT NULL THEN
          RETURN NEXT;
          RETURN;
        END IF;

        -- Concurrent reversals of one operation queue here; the one that waited then finds the committed reversal
        -- (and answers it as a replay when it was the same request), instead of failing on a balance already spent.
        PERFORM 1 FROM wallet_operations o WHERE o.id = v_target.id FOR UPDATE;
        SELECT o.id, o.source_transaction_id, o.request_fingerprint INTO v_known FROM wallet_operations o
        WHERE o.reverses_operation_id = v_target.id;
        IF FOUND THEN
          IF p_reference IS NOT NULL AND v_known.source_transaction_id = p_reference
             AND v_known.request_fingerprint = p_fingerprint THEN
            RETURN QUERY SELECT 'REPLAY', r.* FROM wallet_operation_rows(v_known.id) r;
          ELSE
            outcome := 'ALREADY_REVERSED';
            RETURN NEXT;
          END IF;
          RETURN;
        END IF;

        SELECT min(r.entry_id), array_agg(r.account_id), array_agg(r.amount), array_agg(r.balance_after)
        INTO v_entry, v_accounts, v_amounts, v_afters
        FROM ledger_reverse_entry(p_client_id, v_target.entry_id, 'WALLET_REVERSAL') r;
        SELECT a.account_number INTO v_closed
        FROM wallets w JOIN ledger_accounts a ON a.id = w.id
        WHERE w.id = ANY (v_accounts) AND w.status = 'CLOSED'
        LIMIT 1;
        IF v_closed IS NOT NULL THEN
          RAISE EXCEPTION 'wallet % is CLOSED', v_closed USING ERRCODE = 'WC001', DETAIL = v_closed;
        END IF;

        INSERT INTO wallet_operations (client_id, kind, source_transaction_id, request_fingerprint, entry_id, reverses_operation_id)
        VALUES (p_client_id, 'REVERSAL', p_reference, p_fingerprint, v_entry, v_target.id)
        RETURNING wallet_operations.id INTO v_operation;

        -- One record per original record, direction flipped, balances as the reversing entry moved them; a
        -- single-wallet original had the settlement account as its other side, which gets a record of its own.
        INSERT INTO wallet_transactions (id, operation_id, client_id, account_id, client_service_id, transaction_type,
          transaction_source, currency, transaction_amount, transaction_fee, previous_balance, current_balance,
          other_party_account, other_party_transaction_hash, source_transaction_id, source_transaction_data,
          transaction_narration, transaction_date, original_currency, original_amount, exchange_rate)
        WITH originals AS (
          SELECT t.*, a.account_number AS own_account_number,
                 CASE t.transaction_type WHEN 'CREDIT' THEN 'DEBIT' ELSE 'CREDIT' END AS flipped_type,
                 row_number() OVER (ORDER BY t.transaction_type = 'CREDIT', t.id) AS n,
                 count(*) OVER () AS legs
          FROM wallet_transactions t JOIN ledger_accounts a ON a.id = t.account_id
          WHERE t.operation_id = v_target.id
        ), moved AS (
          SELECT * FROM unnest(v_accounts, v_amounts, v_afters) AS m (account_id, amount, balance_after)
        )
        SELECT v_leg_ids[o.n::int], v_operation, p_client_id, o.account_id, NULL::uuid, o.flipped_type,
               'INTERNAL_REVERAL_' || o.flipped_type, o.currency, o.transaction_amount, o.transaction_fee,
               p.balance_after - p.amount, p.balance_after, o.other_party_account,
               CASE WHEN o.legs > 1 THEN v_leg_ids[3 - o.n::int] ELSE v_other_leg END::text,
               p_reference, jsonb_build_object('reversed_transaction_id', o.id),
               coalesce(p_narration, 'Reversal of ' || o.id), now(), o.original_currency, o.original_amount, o.exchange_rate
        FROM originals o JOIN moved p ON p.account_id = o.account_id
        UNION ALL
        SELECT v_other_leg, v_operation, p_client_id, s.id, NULL::uuid, o.transaction_type,
               'INTERNAL_REVERAL_' || o.transaction_type, s.currency, abs(p.amount), 0,
               p.balance_after - p.amount, p.balance_after, o.own_account_number, v_leg_ids[1]::text,
               p_reference, jsonb_build_object('reversed_transaction_id', o.id),
               coalesce(p_narration, 'Reversal of ' || o.id), now(), NULL::char(3), NULL::numeric, NULL::numeric
        FROM originals o
        JOIN ledger_accounts s ON s.client_id = p_client_id AND s.account_number = o.other_party_account
        JOIN moved p ON p.account_id = s.id
        WHERE o.legs = 1;

        RETURN QUERY SELECT 'REVERSED', r.* FROM wallet_operation_rows(v_operation) r;
      END
      $fn$;
    `);
    await q.query(clientServiceFee('p_amount * t.fee * 0.01', 'p_amount * s.transaction_fee * 0.01'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(clientServiceFee('p_amount * t.fee / 100', 'p_amount * s.transaction_fee / 100'));
    await q.query(`
      DROP FUNCTION wallet_reverse(uuid, uuid, text, text, text);
      DROP FUNCTION wallet_operation_rows(uuid);
      DROP FUNCTION airtime_accept(uuid, text, text, text[], numeric[], text, text, int, timestamptz, text[]);
      DROP FUNCTION payout_accept(uuid, text, text, text, numeric, text, text, text, text, text, text, jsonb, text, text, text,
                                  timestamptz, text[]);
      DROP FUNCTION float_reserve(uuid, uuid, text, text, numeric[], numeric[]);
      DROP FUNCTION paying_service(uuid, text, text[]);
      DROP FUNCTION ledger_reverse_entry(uuid, bigint, text);
      DROP FUNCTION ledger_system_account(uuid, text, text);
    `);
  }
}

/**
 * client_service_fee (migration LedgerBatchesWalletMoney) with the percentage computed as given. Dividing by 100
 * rounds a large quotient to 8 decimals before the 4-decimal half-up rounding (numeric division keeps about 16
 * significant digits): 1.0001 % of 123456789010054.9995 is 1234691346889.5600499995, which came out .5601 where
 * feeFor says .5600. Multiplying by 0.01 is exact.
 */
function clientServiceFee(tierPercentage: string, percentage: string): string {
  return `
    CREATE OR REPLACE FUNCTION client_service_fee(p_service_id uuid, p_amount numeric) RETURNS numeric
    LANGUAGE sql STABLE AS $fn$
      SELECT CASE
        WHEN NOT s.has_transaction_fee THEN 0
        WHEN EXISTS (SELECT 1 FROM client_service_fee_tiers t WHERE t.client_service_id = s.id) THEN coalesce((
          SELECT CASE t.fee_type WHEN 'FIXED' THEN round(t.fee, 4) ELSE round(${tierPercentage}, 4) END
          FROM client_service_fee_tiers t
          WHERE t.client_service_id = s.id AND p_amount BETWEEN t.minimum_amount AND t.maximum_amount
          ORDER BY t.minimum_amount LIMIT 1), 0)
        WHEN s.transaction_fee_type = 'FIXED' THEN round(s.transaction_fee, 4)
        WHEN s.transaction_fee_type = 'PERCENTAGE' THEN round(${percentage}, 4)
        ELSE 0 END
      FROM client_services s WHERE s.id = p_service_id
    $fn$;`;
}
