import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A hosted checkout's payments settle in the same grouped call as direct charges (collection_settle_payments): the
 * payment's status and collection entry as for a charge, then its session's move and checkout callback, built in
 * SQL (checkout_result_payload is held equal to checkoutResult in src/payments/checkout-session.ts by
 * test/payments/checkout-result-payload.e2e.spec.ts). Each session of a group moves once, after all its payments
 * in the group, so two payments of one session are both counted.
 *
 * Lock order, as every other path that takes them: payments (id order), ledger accounts (id order, by the ledger),
 * then sessions (id order). Reversals lock the payment, then its session; expiry and the pay endpoint lock only
 * the session and no payment row.
 *
 * Also: system accounts come from ledger_system_account, once per client, kind and currency of a group; and
 * callback deliveries are written by one function, callback_schedule, which CallbacksService.schedule calls too.
 */
export class CheckoutSettlementOneCall1763800000015 implements MigrationInterface {
  name = 'CheckoutSettlementOneCall1763800000015';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- A callback to deliver: one delivery per distinct URL, in the order given, due now, its payload frozen. The
      -- URLs are the ones the caller names and, with p_to_endpoint, the client's own endpoint for p_kind when it
      -- has set one. The only writer of callback_deliveries rows.
      CREATE FUNCTION callback_schedule(p_client_id uuid, p_kind text, p_event text, p_reference text, p_urls text[],
                                        p_to_endpoint boolean, p_payload jsonb)
      RETURNS void LANGUAGE sql AS $fn$
        INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload)
        SELECT p_client_id, p_kind, p_event, p_reference, u.url, p_payload
        FROM unnest(p_urls || CASE WHEN p_to_endpoint THEN (
                SELECT s.url::text FROM client_callback_settings s WHERE s.client_id = p_client_id AND s.kind = p_kind) END)
             WITH ORDINALITY u(url, ord)
        WHERE u.url IS NOT NULL
        GROUP BY u.url ORDER BY min(u.ord)
      $fn$;

      -- checkoutResult(session, payments) of src/payments/checkout-session.ts, as stored: the checkout callback and
      -- status shape with the session's payments that are no longer pending, oldest first, each as paymentResult
      -- shows it with payment_status as a number and the payer's number as payment_account_reference. Dates are
      -- ISO 8601 in UTC to the millisecond, cut as a JavaScript Date cuts them.
      CREATE FUNCTION checkout_result_payload(p_session_id bigint) RETURNS jsonb
      LANGUAGE sql AS $fn$
        SELECT jsonb_build_object(
          'amount', trunc(cs.amount)::text,
          'checkout_reference', cs.checkout_reference,
          'currency', cs.currency,
          'merchant_transaction_id', cs.merchant_transaction_id,
          'narration', cs.narration,
          'payments', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
              'event', CASE p.payment_status WHEN 700 THEN 'successful_payment' WHEN 701 THEN 'failed_payment'
                                             WHEN 702 THEN 'reversed_payment' ELSE 'pending_payment' END,
              'amount', round(p.service_amount, 4)::text,
              'extra_data', p.extra_data,
              'client_code', c.code,
              'country_code', p.country_code,
              'payer_msisdn', p.payer_msisdn,
              'payment_date', to_char(coalesce(p.settled_at, p.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'service_code', s.code,
              'currency_code', p.currency,
              'account_number', p.account_number,
              'payment_status', p.payment_status,
              'transaction_id', p.id::text,
              'payment_id', p.id::text,
              'payer_narration', p.description,
              'charge_request_id', p.id::text,
              'external_reference', p.external_reference,
              'receiver_narration', p.description,
              'payment_method_code', p.payment_method_code,
              'payer_transaction_id', coalesce(p.payer_transaction_id, ''),
              'payment_account_reference', p.payer_msisdn) ORDER BY p.id)
            FROM payments p JOIN clients c ON c.id = p.client_id JOIN client_services s ON s.id = p.client_service_id
            WHERE p.checkout_session_id = cs.id AND p.payment_status <> 703), '[]'),
          'status', cs.status,
          'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        FROM checkout_sessions cs WHERE cs.id = p_session_id
      $fn$;

      -- Sessions whose payments reached a result (or jammed), with those payments' rows already written: each
      -- follows all its payments as CheckoutSessionsService did (paid when its successful payments cover the
      -- amount, else jammed when one is, else part paid, else expired once past its end, else unpaid), and its
      -- merchant is told in the checkout shape unless a payment is jammed.
      CREATE FUNCTION checkout_follow_payments(p_sessions bigint[]) RETURNS void
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_notify bigint[];
      BEGIN
        PERFORM 1 FROM checkout_sessions cs WHERE cs.id = ANY(p_sessions) ORDER BY cs.id FOR UPDATE;
        WITH tally AS (
          SELECT p.checkout_session_id AS id, coalesce(sum(p.service_amount) FILTER (WHERE p.payment_status = 700), 0) AS paid,
            bool_or(p.payment_status = 704) AS jammed
          FROM payments p WHERE p.checkout_session_id = ANY(p_sessions)
          GROUP BY p.checkout_session_id
        ), moved AS (
          UPDATE checkout_sessions cs SET
            status = CASE WHEN t.paid >= cs.amount THEN 801 WHEN t.jammed THEN 850 WHEN t.paid > 0 THEN 802
                          WHEN cs.expires_at <= clock_timestamp() THEN 820 ELSE 803 END,
            updated_at = now()
          FROM tally t WHERE cs.id = t.id
          RETURNING cs.id, t.jammed
        )
        SELECT array_agg(m.id ORDER BY m.id) FILTER (WHERE NOT m.jammed) INTO v_notify FROM moved m;

        PERFORM callback_schedule(cs.client_id, 'collections', 'checkout_' || cs.status, cs.merchant_transaction_id,
                                  ARRAY[cs.callback_url::text], false, checkout_result_payload(cs.id))
        FROM checkout_sessions cs WHERE cs.id = ANY(v_notify) ORDER BY cs.id;
      END
      $fn$;

      -- A batch of payments (direct charges and checkouts' payments) settled with their operators' results, in one
      -- call (group commit). Each item {payment_id, outcome SUCCEEDED | FAILED | JAMMED, payer_transaction_id,
      -- settled_at, event, payload} is handled on its own; event and payload are the payment callback the result
      -- announces, or null (a jammed payment; a checkout's payment, whose session calls back instead). The answer is
      -- one row per item, in order: SETTLED, SKIPPED (the payment no longer awaits its operator, or an earlier item
      -- of the batch settled it) or FAILED with the error, so that item's job retries. Payments are locked in id
      -- order, then ledger_post_entries locks the batch's accounts once in id order, then the sessions of the
      -- checkouts' payments are locked in id order, so batches cannot deadlock with each other or with reversals,
      -- and the hot accounts (in-flight, settlement wallet, fee income) are updated once.
      CREATE OR REPLACE FUNCTION collection_settle_payments(p_items jsonb)
      RETURNS TABLE (payment_id bigint, result text, error_code text, error_message text, error_detail text)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        v_accounts jsonb := '{}';
        v_account  record;
        v_rows     jsonb;
        v_item     jsonb;
        v_sessions bigint[];
        v_code     text;
        v_message  text;
        v_detail   text;
      BEGIN
        PERFORM 1 FROM payments p WHERE p.id IN (SELECT (e->>'payment_id')::bigint FROM jsonb_array_elements(p_items) e)
        ORDER BY p.id FOR UPDATE;
        -- The in-flight and fee income accounts the entries need, keyed 'client kind currency', in a fixed order so
        -- that groups creating the same ones do not wait on each other crosswise.
        FOR v_account IN
          SELECT DISTINCT p.client_id, k.kind, p.currency::text AS currency
          FROM jsonb_array_elements(p_items) e JOIN payments p ON p.id = (e->>'payment_id')::bigint
          CROSS JOIN (VALUES ('IN_FLIGHT_MOBILE_MONEY'), ('FEE_INCOME')) k(kind)
          WHERE e->>'outcome' = 'SUCCEEDED'
          ORDER BY p.client_id, k.kind, currency
        LOOP
          v_accounts := v_accounts || jsonb_build_object(concat_ws(' ', v_account.client_id, v_account.kind, v_account.currency),
            ledger_system_account(v_account.client_id, v_account.kind, v_account.currency));
        END LOOP;

        BEGIN
          SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO v_rows FROM collection_settle_apply(p_items, v_accounts) r;
        EXCEPTION WHEN OTHERS THEN
          -- The ledger refuses a whole batch when one of its entries is malformed (an account missing, of another
          -- client or currency): then each item on its own, so that only the item at fault fails.
          v_rows := '[]';
          FOR v_item IN SELECT e FROM jsonb_array_elements(p_items) e LOOP
            BEGIN
              v_rows := v_rows || (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]')
                                   FROM collection_settle_apply(jsonb_build_array(v_item), v_accounts) r);
            EXCEPTION WHEN OTHERS THEN
              GET STACKED DIAGNOSTICS v_code = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL;
              v_rows := v_rows || jsonb_build_array(jsonb_build_object('payment_id', (v_item->>'payment_id')::bigint, 'result', 'FAILED',
                'error_code', v_code, 'error_message', v_message, 'error_detail', v_detail));
            END;
          END LOOP;
        END;

        -- The sessions of the checkouts' payments settled here follow once all of the group's payments are written.
        SELECT array_agg(DISTINCT p.checkout_session_id) INTO v_sessions
        FROM jsonb_to_recordset(v_rows) r(payment_id bigint, result text) JOIN payments p ON p.id = r.payment_id
        WHERE r.result = 'SETTLED' AND p.checkout_session_id IS NOT NULL;
        IF v_sessions IS NOT NULL THEN
          PERFORM checkout_follow_payments(v_sessions);
        END IF;

        RETURN QUERY SELECT * FROM jsonb_to_recordset(v_rows)
          AS x(payment_id bigint, result text, error_code text, error_message text, error_detail text);
      END
      $fn$;

      DROP FUNCTION collection_settle_apply(jsonb);

      -- collection_settle_payments' work on items whose payments it holds locked, with the system accounts it
      -- found (p_accounts): every succeeding payment's collection entry in one ledger_post_entries call (the
      -- in-flight account to the service's settlement wallet net of the merchant's fee; the payer's charge and the
      -- fee to fee income), then each moving payment's status set-based, then the callbacks the items carry.
      CREATE FUNCTION collection_settle_apply(p_items jsonb, p_accounts jsonb)
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
        v_answers      jsonb;
      BEGIN
        WITH moving AS (
          SELECT DISTINCT ON (p.id) e.ord, p.id, p.client_id, p.total_amount, p.service_amount, p.merchant_fee, p.transaction_charge,
            s.settlement_account_id,
            (p_accounts ->> concat_ws(' ', p.client_id, 'IN_FLIGHT_MOBILE_MONEY', p.currency::text))::uuid AS in_flight_id,
            (p_accounts ->> concat_ws(' ', p.client_id, 'FEE_INCOME', p.currency::text))::uuid AS fee_income_id
          FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
          JOIN payments p ON p.id = (e.item->>'payment_id')::bigint
          JOIN client_services s ON s.id = p.client_service_id
          WHERE e.item->>'outcome' = 'SUCCEEDED' AND p.payment_status = 703
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

        WITH items AS (
          SELECT e.ord, (e.item->>'payment_id')::bigint AS pid, e.item,
            row_number() OVER (PARTITION BY e.item->>'payment_id' ORDER BY e.ord) = 1 AS first
          FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
        ), moved AS (
          SELECT i.ord, i.item, i.item->>'outcome' AS outcome, p.id,
            (v_posted -> array_position(v_payments, p.id)::text ->> 'entry_id')::bigint AS entry_id,
            v_posted -> array_position(v_payments, p.id)::text ->> 'refused' AS refused
          FROM items i JOIN payments p ON p.id = i.pid
          WHERE i.first AND p.payment_status = 703 AND (p.next_step IS DISTINCT FROM 'VERIFY_OTP' OR p.otp_verified_at IS NOT NULL)
        ), updated AS (
          UPDATE payments p SET
            payment_status = CASE m.outcome WHEN 'SUCCEEDED' THEN 700 WHEN 'FAILED' THEN 701 ELSE 704 END,
            entry_id = m.entry_id,
            payer_transaction_id = CASE WHEN m.outcome = 'SUCCEEDED' THEN m.item->>'payer_transaction_id' ELSE p.payer_transaction_id END,
            settled_at = CASE WHEN m.outcome = 'JAMMED' THEN p.settled_at ELSE (m.item->>'settled_at')::timestamptz END,
            updated_at = now()
          FROM moved m WHERE p.id = m.id AND m.refused IS NULL
        )
        SELECT jsonb_agg(jsonb_build_object('ord', i.ord, 'payment_id', i.pid,
                 'result', CASE WHEN m.id IS NULL THEN 'SKIPPED' WHEN m.refused IS NOT NULL THEN 'FAILED' ELSE 'SETTLED' END,
                 'refused', m.refused) ORDER BY i.ord)
          INTO v_answers
        FROM items i LEFT JOIN moved m ON m.ord = i.ord;

        -- The payment callbacks (a direct charge's; as PaymentsService announced them: to the request's URL and,
        -- when it asked to notify, to the client's collections endpoint).
        PERFORM callback_schedule(p.client_id, 'collections', e.item->>'event', p.external_reference, ARRAY[p.callback_url::text],
                                  p.notify_client OR p.notify_originator, e.item->'payload')
        FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
        JOIN jsonb_to_recordset(v_answers) a(ord bigint, result text) ON a.ord = e.ord
        JOIN payments p ON p.id = (e.item->>'payment_id')::bigint
        WHERE a.result = 'SETTLED' AND e.item->>'event' IS NOT NULL
        ORDER BY e.ord;

        RETURN QUERY
        SELECT a.payment_id, a.result,
          CASE WHEN a.refused IS NOT NULL THEN 'LF001' END,
          CASE WHEN a.refused IS NOT NULL THEN format('account %s would go below its minimum balance', a.refused) END,
          a.refused
        FROM jsonb_to_recordset(v_answers) a(ord bigint, payment_id bigint, result text, refused text)
        ORDER BY a.ord;
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION collection_settle_apply(jsonb, jsonb);
      DROP FUNCTION checkout_follow_payments(bigint[]);
      DROP FUNCTION checkout_result_payload(bigint);
      DROP FUNCTION callback_schedule(uuid, text, text, text, text[], boolean, jsonb);
    `);
    await q.query(SETTLE_PAYMENTS_011);
  }
}

/** collection_settle_payments and collection_settle_apply as migration CollectionsOneCall wrote them. */
const SETTLE_PAYMENTS_011 = `
      CREATE OR REPLACE FUNCTION collection_settle_payments(p_items jsonb)
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
`;
