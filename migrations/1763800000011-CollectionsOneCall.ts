import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Collections in one database call each: charge acceptance and checkout initiation are one SQL function call
 * (idempotency check, service and split checks, inserts), and settlements are applied in batches by one call.
 *
 * A refusal is returned, not raised: `problem` names the rule that refused and `details` its values, and the API
 * words the documented error (src/payments/collecting-service.ts, src/settlements/split-settlements.service.ts).
 * The checks run in the order the API checked them before, so the same request gets the same answer.
 */
export class CollectionsOneCall1763800000011 implements MigrationInterface {
  name = 'CollectionsOneCall1763800000011';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- The client service a collection is made on: the caller's, active, with a settlement wallet, the amount
      -- within its bounds (problems SERVICE_UNKNOWN, SERVICE_NO_WALLET, AMOUNT_BOUNDS [minimum, maximum]).
      CREATE FUNCTION collecting_service(p_client_id uuid, p_service_code text, p_amount numeric)
      RETURNS TABLE (problem text, details text[], service_id uuid, settlement_currency text, fee numeric)
      LANGUAGE plpgsql STABLE AS $fn$
      #variable_conflict use_column
      DECLARE
        s record;
      BEGIN
        SELECT cs.id, cs.is_active, cs.minimum_transaction_amount AS minimum, cs.maximum_transaction_amount AS maximum,
               la.currency::text AS currency
          INTO s
        FROM client_services cs LEFT JOIN ledger_accounts la ON la.id = cs.settlement_account_id
        WHERE cs.client_id = p_client_id AND cs.code = p_service_code;
        IF s.id IS NULL OR s.is_active <> 1 THEN
          RETURN QUERY SELECT 'SERVICE_UNKNOWN', NULL::text[], NULL::uuid, NULL::text, NULL::numeric;
        ELSIF s.currency IS NULL THEN
          RETURN QUERY SELECT 'SERVICE_NO_WALLET', NULL::text[], NULL::uuid, NULL::text, NULL::numeric;
        ELSIF p_amount < s.minimum OR p_amount > s.maximum THEN
          RETURN QUERY SELECT 'AMOUNT_BOUNDS', ARRAY[s.minimum::text, s.maximum::text], NULL::uuid, NULL::text, NULL::numeric;
        ELSE
          -- client_service_fee: migration LedgerBatchesWalletMoney.
          RETURN QUERY SELECT NULL::text, NULL::text[], s.id, s.currency, client_service_fee(s.id, p_amount);
        END IF;
      END
      $fn$;

      -- Split settlements of a collection (p_splits: [{account, amount, reason}] as the API parsed them, NULL when
      -- none were given) against the service's mandatory partners and the partner wallets. Problems: SPLIT_MANDATORY
      -- [accounts…], SPLIT_PARTNER_UNKNOWN / SPLIT_PARTNER_INACTIVE [account], SPLIT_PARTNER_CURRENCY [account,
      -- currency], SPLIT_TOTAL [total, amount]. Otherwise the shares as stored: each item with its wallet's accountId.
      CREATE FUNCTION split_settlements_check(p_client_id uuid, p_service_id uuid, p_currency text, p_amount numeric, p_splits jsonb)
      RETURNS TABLE (problem text, details text[], shares jsonb)
      LANGUAGE plpgsql STABLE AS $fn$
      #variable_conflict use_column
      DECLARE
        v_mandatory text[];
        v_missing   text[];
        v_bad       record;
        v_total     numeric;
      BEGIN
        SELECT coalesce(array_agg(a.account_number::text ORDER BY a.account_number), '{}') INTO v_mandatory
        FROM client_service_partners p JOIN ledger_accounts a ON a.id = p.account_id
        WHERE p.client_service_id = p_service_id;
        IF p_splits IS NULL THEN
          IF cardinality(v_mandatory) > 0 THEN
            RETURN QUERY SELECT 'SPLIT_MANDATORY', v_mandatory, NULL::jsonb;
          ELSE
            RETURN QUERY SELECT NULL::text, NULL::text[], NULL::jsonb;
          END IF;
          RETURN;
        END IF;

        SELECT i.account, CASE
                 WHEN w.id IS NULL THEN 'SPLIT_PARTNER_UNKNOWN'
                 WHEN w.status <> 'ACTIVE' OR NOT w.profile_active THEN 'SPLIT_PARTNER_INACTIVE'
                 WHEN w.currency <> p_currency THEN 'SPLIT_PARTNER_CURRENCY'
               END AS problem
          INTO v_bad
        FROM jsonb_array_elements(p_splits) WITH ORDINALITY AS e(item, ord)
        CROSS JOIN LATERAL (SELECT e.item->>'account' AS account) i
        LEFT JOIN LATERAL (
          SELECT a.id, a.currency::text AS currency, wl.status, pr.is_active = 1 AS profile_active
          FROM ledger_accounts a JOIN wallets wl ON wl.id = a.id JOIN profiles pr ON pr.id = wl.profile_id
          WHERE a.client_id = p_client_id AND a.account_number = i.account
        ) w ON true
        WHERE w.id IS NULL OR w.status <> 'ACTIVE' OR NOT w.profile_active OR w.currency <> p_currency
        ORDER BY e.ord LIMIT 1;
        IF v_bad.problem IS NOT NULL THEN
          RETURN QUERY SELECT v_bad.problem,
            CASE WHEN v_bad.problem = 'SPLIT_PARTNER_CURRENCY' THEN ARRAY[v_bad.account, p_currency] ELSE ARRAY[v_bad.account] END,
            NULL::jsonb;
          RETURN;
        END IF;

        SELECT sum((e.item->>'amount')::numeric) INTO v_total FROM jsonb_array_elements(p_splits) e(item);
        IF v_total > p_amount THEN
          RETURN QUERY SELECT 'SPLIT_TOTAL', ARRAY[v_total::text, p_amount::text], NULL::jsonb;
          RETURN;
        END IF;

        SELECT coalesce(array_agg(m ORDER BY m), '{}') INTO v_missing FROM unnest(v_mandatory) m
        WHERE m NOT IN (SELECT e.item->>'account' FROM jsonb_array_elements(p_splits) e(item));
        IF cardinality(v_missing) > 0 THEN
          RETURN QUERY SELECT 'SPLIT_MANDATORY', v_missing, NULL::jsonb;
          RETURN;
        END IF;

        RETURN QUERY
        SELECT NULL::text, NULL::text[], jsonb_agg(e.item || jsonb_build_object('accountId', a.id) ORDER BY e.ord)
        FROM jsonb_array_elements(p_splits) WITH ORDINALITY AS e(item, ord)
        JOIN ledger_accounts a ON a.client_id = p_client_id AND a.account_number = e.item->>'account';
      END
      $fn$;

      -- A direct charge, accepted in one call. outcome: CREATED, REPLAY (the original, same body), CONFLICT (the
      -- reference was used for another body) or REFUSED (problem, details; REQUEST when the API's own check
      -- refused: p_refusal REQUEST before the service checks, SPLITS after them). The charge, its payment_url and its
      -- settlement job (unless it waits for an OTP) are written together.
      CREATE FUNCTION collection_accept_charge(
        p_client_id uuid, p_service_code text, p_fingerprint text, p_refusal text, p_charge jsonb, p_splits jsonb,
        p_payment_url_prefix text, p_settle_topic text, p_settle_at timestamptz)
      RETURNS TABLE (outcome text, problem text, details text[], id bigint, service_amount numeric, transaction_charge numeric,
                     total_amount numeric, payment_url text, next_step text)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        c          payments%ROWTYPE;
        v_service  record;
        v_splits   record;
        v_fee      numeric;
        v_id       bigint;
      BEGIN
        c := jsonb_populate_record(NULL::payments, p_charge);
        RETURN QUERY SELECT * FROM collection_charge_by_reference(p_client_id, c.external_reference, p_fingerprint);
        IF FOUND THEN RETURN; END IF;
        IF p_refusal = 'REQUEST' THEN
          RETURN QUERY SELECT 'REFUSED', 'REQUEST', NULL::text[], NULL::bigint, NULL::numeric, NULL::numeric, NULL::numeric, NULL::text, NULL::text;
          RETURN;
        END IF;

        SELECT * INTO v_service FROM collecting_service(p_client_id, p_service_code, c.service_amount);
        IF v_service.problem IS NULL AND v_service.settlement_currency <> c.currency THEN
          v_service.problem := 'CURRENCY';
          v_service.details := ARRAY[v_service.settlement_currency];
        END IF;
        v_fee := CASE WHEN c.add_transaction_charge THEN 0 ELSE v_service.fee END;
        IF v_service.problem IS NULL AND v_fee >= c.service_amount THEN
          v_service.problem := 'FEE';
          v_service.details := ARRAY[v_fee::text];
        END IF;
        IF v_service.problem IS NULL AND p_refusal = 'SPLITS' THEN
          v_service.problem := 'REQUEST';
        END IF;
        IF v_service.problem IS NULL THEN
          SELECT * INTO v_splits FROM split_settlements_check(p_client_id, v_service.service_id, c.currency, c.service_amount, p_splits);
          v_service.problem := v_splits.problem;
          v_service.details := v_splits.details;
        END IF;
        IF v_service.problem IS NOT NULL THEN
          RETURN QUERY SELECT 'REFUSED', v_service.problem, v_service.details, NULL::bigint, NULL::numeric, NULL::numeric, NULL::numeric,
            NULL::text, NULL::text;
          RETURN;
        END IF;

        v_id := nextval(pg_get_serial_sequence('payments', 'id'));
        INSERT INTO payments (id, client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
          origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number,
          currency, country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge,
          payment_method_code, extra_data, description, notify_client, notify_originator, callback_url, next_step, payment_url,
          split_settlements)
        VALUES (v_id, p_client_id, v_service.service_id, NULL, c.external_reference, p_fingerprint,
          c.origin_channel_code, c.originator_msisdn, c.payer_msisdn, c.payer_name, c.payer_email, c.account_number, c.invoice_number,
          c.currency, c.country_code, c.service_amount, c.transaction_charge, c.service_amount + c.transaction_charge, v_fee,
          c.add_transaction_charge, c.payment_method_code, c.extra_data, c.description, c.notify_client, c.notify_originator,
          c.callback_url, c.next_step, CASE WHEN c.next_step = 'AUTHORIZE_TRANSACTION' THEN p_payment_url_prefix || v_id END,
          v_splits.shares)
        ON CONFLICT (client_id, external_reference) WHERE checkout_session_id IS NULL DO NOTHING;
        IF NOT FOUND THEN
          -- A concurrent duplicate committed first (the unique index made this insert wait for it).
          RETURN QUERY SELECT * FROM collection_charge_by_reference(p_client_id, c.external_reference, p_fingerprint);
          RETURN;
        END IF;
        -- An OTP charge is submitted once the payer proves the OTP; the others settle after the operator's delay.
        IF c.next_step IS DISTINCT FROM 'VERIFY_OTP' THEN
          INSERT INTO outbox (topic, payload, available_at) VALUES (p_settle_topic, jsonb_build_object('paymentId', v_id::text), p_settle_at);
        END IF;
        RETURN QUERY SELECT 'CREATED', NULL::text, NULL::text[], v_id, c.service_amount, c.transaction_charge,
          c.service_amount + c.transaction_charge, CASE WHEN c.next_step = 'AUTHORIZE_TRANSACTION' THEN p_payment_url_prefix || v_id END,
          c.next_step::text;
      END
      $fn$;

      -- The direct charge already recorded under a reference, as collection_accept_charge answers it.
      CREATE FUNCTION collection_charge_by_reference(p_client_id uuid, p_reference text, p_fingerprint text)
      RETURNS TABLE (outcome text, problem text, details text[], id bigint, service_amount numeric, transaction_charge numeric,
                     total_amount numeric, payment_url text, next_step text)
      LANGUAGE sql STABLE AS $fn$
        SELECT CASE WHEN p.request_fingerprint = p_fingerprint THEN 'REPLAY' ELSE 'CONFLICT' END, NULL::text, NULL::text[],
          p.id, p.service_amount, p.transaction_charge, p.total_amount, p.payment_url::text, p.next_step::text
        FROM payments p
        WHERE p.client_id = p_client_id AND p.external_reference = p_reference AND p.checkout_session_id IS NULL
      $fn$;

      -- A hosted-checkout session, opened in one call: outcomes and refusals as collection_accept_charge (no currency
      -- or fee check: the session takes the service's currency). The session and its expiry job are written together.
      CREATE FUNCTION collection_initiate_checkout(
        p_client_id uuid, p_service_code text, p_fingerprint text, p_refusal text, p_session jsonb, p_splits jsonb,
        p_expire_topic text)
      RETURNS TABLE (outcome text, problem text, details text[], merchant_transaction_id text, checkout_reference text,
                     currency text, amount numeric, expires_at timestamptz)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        s          checkout_sessions%ROWTYPE;
        v_service  record;
        v_splits   record;
        v_id       bigint;
      BEGIN
        s := jsonb_populate_record(NULL::checkout_sessions, p_session);
        RETURN QUERY SELECT * FROM collection_checkout_by_reference(p_client_id, s.merchant_transaction_id, p_fingerprint);
        IF FOUND THEN RETURN; END IF;
        IF p_refusal = 'REQUEST' THEN
          RETURN QUERY SELECT 'REFUSED', 'REQUEST', NULL::text[], NULL::text, NULL::text, NULL::text, NULL::numeric, NULL::timestamptz;
          RETURN;
        END IF;

        SELECT * INTO v_service FROM collecting_service(p_client_id, p_service_code, s.amount);
        IF v_service.problem IS NULL AND p_refusal = 'SPLITS' THEN
          v_service.problem := 'REQUEST';
        END IF;
        IF v_service.problem IS NULL THEN
          SELECT * INTO v_splits FROM split_settlements_check(p_client_id, v_service.service_id, v_service.settlement_currency, s.amount, p_splits);
          v_service.problem := v_splits.problem;
          v_service.details := v_splits.details;
        END IF;
        IF v_service.problem IS NOT NULL THEN
          RETURN QUERY SELECT 'REFUSED', v_service.problem, v_service.details, NULL::text, NULL::text, NULL::text, NULL::numeric,
            NULL::timestamptz;
          RETURN;
        END IF;

        INSERT INTO checkout_sessions (checkout_reference, client_id, client_service_id, merchant_transaction_id, request_fingerprint,
          amount, currency, payer_name, payer_email, payer_msisdn, account_number, narration, callback_url, redirect_url,
          extra_data, split_settlements, expires_at)
        VALUES (s.checkout_reference, p_client_id, v_service.service_id, s.merchant_transaction_id, p_fingerprint,
          s.amount, v_service.settlement_currency, s.payer_name, s.payer_email, s.payer_msisdn, s.account_number, s.narration,
          s.callback_url, s.redirect_url, s.extra_data, v_splits.shares, s.expires_at)
        ON CONFLICT (client_id, merchant_transaction_id) DO NOTHING
        RETURNING checkout_sessions.id INTO v_id;
        IF v_id IS NULL THEN
          -- A concurrent duplicate committed first.
          RETURN QUERY SELECT * FROM collection_checkout_by_reference(p_client_id, s.merchant_transaction_id, p_fingerprint);
          RETURN;
        END IF;
        INSERT INTO outbox (topic, payload, available_at) VALUES (p_expire_topic, jsonb_build_object('sessionId', v_id::text), s.expires_at);
        RETURN QUERY SELECT 'CREATED', NULL::text, NULL::text[], s.merchant_transaction_id::text, s.checkout_reference::text,
          v_service.settlement_currency, s.amount, s.expires_at;
      END
      $fn$;

      CREATE FUNCTION collection_checkout_by_reference(p_client_id uuid, p_merchant_transaction_id text, p_fingerprint text)
      RETURNS TABLE (outcome text, problem text, details text[], merchant_transaction_id text, checkout_reference text,
                     currency text, amount numeric, expires_at timestamptz)
      LANGUAGE sql STABLE AS $fn$
        SELECT CASE WHEN cs.request_fingerprint = p_fingerprint THEN 'REPLAY' ELSE 'CONFLICT' END, NULL::text, NULL::text[],
          cs.merchant_transaction_id::text, cs.checkout_reference::text, cs.currency::text, cs.amount, cs.expires_at
        FROM checkout_sessions cs
        WHERE cs.client_id = p_client_id AND cs.merchant_transaction_id = p_merchant_transaction_id
      $fn$;

      -- A batch of direct charges settled with their operators' results, in one call (group commit). Each item
      -- {payment_id, outcome SUCCEEDED | FAILED | JAMMED, payer_transaction_id, settled_at, event, payload} is handled
      -- on its own; the answer is one row per item, in order: SETTLED, SKIPPED (the payment no longer awaits its
      -- operator, or an earlier item of the batch settled it) or FAILED with the error, so that item's job retries.
      -- Payments are locked in id order, then ledger_post_entries locks the batch's accounts once in id order, so
      -- batches cannot deadlock, and the hot accounts (in-flight, settlement wallet, fee income) are updated once.
      CREATE FUNCTION collection_settle_payments(p_items jsonb)
      RETURNS TABLE (payment_id bigint, result text, error_code text, error_message text, error_detail text)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        v_rows    jsonb;
        v_item    jsonb;
        v_code    text;
        v_message text;
        v_detail  text;
      BEGIN
        PERFORM 1 FROM payments p WHERE p.id IN (SELECT (e->>'payment_id')::bigint FROM jsonb_array_elements(p_items) e)
        ORDER BY p.id FOR UPDATE;
        -- The in-flight and fee income accounts the entries need, created on first use as LedgerService.systemAccount does.
        INSERT INTO ledger_accounts (client_id, kind, currency, can_overdraw)
        SELECT DISTINCT p.client_id, k.kind, p.currency, true
        FROM jsonb_array_elements(p_items) e JOIN payments p ON p.id = (e->>'payment_id')::bigint
        CROSS JOIN (VALUES ('IN_FLIGHT_MOBILE_MONEY'), ('FEE_INCOME')) k(kind)
        WHERE e->>'outcome' = 'SUCCEEDED'
          AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.client_id = p.client_id AND a.kind = k.kind AND a.currency = p.currency)
        ON CONFLICT (client_id, kind, currency) WHERE kind <> 'WALLET' DO NOTHING;

        BEGIN
          SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO v_rows FROM collection_settle_apply(p_items) r;
        EXCEPTION WHEN OTHERS THEN
          -- The ledger refuses a whole batch when one of its entries is malformed (an account missing, of another
          -- client or currency): then each item on its own, so that only the item at fault fails.
          v_rows := '[]';
          FOR v_item IN SELECT e FROM jsonb_array_elements(p_items) e LOOP
            BEGIN
              v_rows := v_rows || (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') FROM collection_settle_apply(jsonb_build_array(v_item)) r);
            EXCEPTION WHEN OTHERS THEN
              GET STACKED DIAGNOSTICS v_code = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL;
              v_rows := v_rows || jsonb_build_array(jsonb_build_object('payment_id', (v_item->>'payment_id')::bigint, 'result', 'FAILED',
                'error_code', v_code, 'error_message', v_message, 'error_detail', v_detail));
            END;
          END LOOP;
        END;
        RETURN QUERY SELECT * FROM jsonb_to_recordset(v_rows)
          AS x(payment_id bigint, result text, error_code text, error_message text, error_detail text);
      END
      $fn$;

      -- collection_settle_payments' work on items whose payments it holds locked: every succeeding payment's
      -- collection entry in one ledger_post_entries call (the in-flight account to the service's settlement wallet
      -- net of the merchant's fee; the payer's charge and the fee to fee income), then each moving payment's status
      -- and its callbacks (as CallbacksService.schedule writes them: one delivery per distinct URL), set-based.
      CREATE FUNCTION collection_settle_apply(p_items jsonb)
      RETURNS TABLE (payment_id bigint, result text, error_code text, error_message text, error_detail text)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        v_payments     bigint[];
        v_clients      uuid[];
        v_line_entry   int[];
        v_line_account uuid[];
        v_line_amount  numeric[];
        v_posted       jsonb := '{}';
      BEGIN
        WITH moving AS (
          SELECT DISTINCT ON (p.id) e.ord, p.id, p.client_id, p.total_amount, p.service_amount, p.merchant_fee, p.transaction_charge,
            s.settlement_account_id,
            (SELECT la.id FROM ledger_accounts la WHERE la.client_id = p.client_id AND la.kind = 'IN_FLIGHT_MOBILE_MONEY' AND la.currency = p.currency) AS in_flight_id,
            (SELECT la.id FROM ledger_accounts la WHERE la.client_id = p.client_id AND la.kind = 'FEE_INCOME' AND la.currency = p.currency) AS fee_income_id
          FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
          JOIN payments p ON p.id = (e.item->>'payment_id')::bigint
          JOIN client_services s ON s.id = p.client_service_id
          WHERE e.item->>'outcome' = 'SUCCEEDED' AND p.payment_status = 703 AND p.checkout_session_id IS NULL
            AND (p.next_step IS DISTINCT FROM 'VERIFY_OTP' OR p.otp_verified_at IS NOT NULL)
          ORDER BY p.id, e.ord
        ), entries AS (
          SELECT row_number() OVER (ORDER BY m.ord)::int AS n, m.* FROM moving m
        ), lines AS (
          SELECT x.n, l.k, l.account, l.amount FROM entries x
          CROSS JOIN LATERAL (VALUES (1, x.in_flight_id, -x.total_amount), (2, x.settlement_account_id, x.service_amount - x.merchant_fee),
                                     (3, x.fee_income_id, x.transaction_charge + x.merchant_fee)) l(k, account, amount)
          WHERE l.amount <> 0
        )
        SELECT (SELECT array_agg(x.id ORDER BY x.n) FROM entries x), (SELECT array_agg(x.client_id ORDER BY x.n) FROM entries x),
               (SELECT array_agg(l.n ORDER BY l.n, l.k) FROM lines l), (SELECT array_agg(l.account ORDER BY l.n, l.k) FROM lines l),
               (SELECT array_agg(l.amount ORDER BY l.n, l.k) FROM lines l)
          INTO v_payments, v_clients, v_line_entry, v_line_account, v_line_amount;

        IF v_payments IS NOT NULL THEN
          SELECT jsonb_object_agg(r.entry_no::text, jsonb_build_object('entry_id', r.entry_id, 'refused', r.refused_account)) INTO v_posted
          FROM (SELECT DISTINCT ON (pe.entry_no) pe.entry_no, pe.entry_id, pe.refused_account
                FROM ledger_post_entries(v_clients, array_fill('PAYMENT'::text, ARRAY[cardinality(v_clients)]), v_line_entry, v_line_account,
                                         v_line_amount) pe
                ORDER BY pe.entry_no) r;
        END IF;

        RETURN QUERY
        WITH items AS (
          SELECT e.ord, (e.item->>'payment_id')::bigint AS pid, e.item,
            row_number() OVER (PARTITION BY e.item->>'payment_id' ORDER BY e.ord) = 1 AS first
          FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
        ), moves AS (
          SELECT i.ord, i.item, p.id, p.client_id, p.external_reference, p.callback_url, p.notify_client, p.notify_originator,
            v_posted -> array_position(v_payments, p.id)::text AS posted
          FROM items i JOIN payments p ON p.id = i.pid
          WHERE i.first AND p.payment_status = 703 AND p.checkout_session_id IS NULL
            AND (p.next_step IS DISTINCT FROM 'VERIFY_OTP' OR p.otp_verified_at IS NOT NULL)
        ), moved AS (
          SELECT m.*, m.item->>'outcome' AS outcome, (m.posted->>'entry_id')::bigint AS entry_id, m.posted->>'refused' AS refused
          FROM moves m
        ), updated AS (
          UPDATE payments p SET
            payment_status = CASE m.outcome WHEN 'SUCCEEDED' THEN 700 WHEN 'FAILED' THEN 701 ELSE 704 END,
            entry_id = m.entry_id,
            payer_transaction_id = CASE WHEN m.outcome = 'SUCCEEDED' THEN m.item->>'payer_transaction_id' ELSE p.payer_transaction_id END,
            settled_at = CASE WHEN m.outcome = 'JAMMED' THEN p.settled_at ELSE (m.item->>'settled_at')::timestamptz END,
            updated_at = now()
          FROM moved m WHERE p.id = m.id AND m.refused IS NULL
        ), deliveries AS (
          INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload)
          SELECT m.client_id, 'collections', m.item->>'event', m.external_reference, u.url, m.item->'payload'
          FROM moved m
          CROSS JOIN LATERAL (
            SELECT DISTINCT x.url FROM unnest(ARRAY[m.callback_url::text, CASE WHEN m.notify_client OR m.notify_originator THEN
              (SELECT cs.url::text FROM client_callback_settings cs WHERE cs.client_id = m.client_id AND cs.kind = 'collections') END]) x(url)
            WHERE x.url IS NOT NULL) u
          WHERE m.refused IS NULL AND m.outcome <> 'JAMMED'
        )
        SELECT i.pid, CASE WHEN m.id IS NULL THEN 'SKIPPED' WHEN m.refused IS NOT NULL THEN 'FAILED' ELSE 'SETTLED' END,
          CASE WHEN m.refused IS NOT NULL THEN 'LF001' END,
          CASE WHEN m.refused IS NOT NULL THEN format('account %s would go below its minimum balance', m.refused) END,
          m.refused
        FROM items i LEFT JOIN moved m ON m.ord = i.ord
        ORDER BY i.ord;
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION collection_settle_payments(jsonb);
      DROP FUNCTION collection_settle_apply(jsonb);
      DROP FUNCTION collection_initiate_checkout(uuid, text, text, text, jsonb, jsonb, text);
      DROP FUNCTION collection_checkout_by_reference(uuid, text, text);
      DROP FUNCTION collection_accept_charge(uuid, text, text, text, jsonb, jsonb, text, text, timestamptz);
      DROP FUNCTION collection_charge_by_reference(uuid, text, text);
      DROP FUNCTION split_settlements_check(uuid, uuid, text, numeric, jsonb);
      DROP FUNCTION collecting_service(uuid, text, numeric);
    `);
  }
}
