-- Settles a group of one client's collected payments in one call: entries, statuses, callbacks, and the checkout
-- sessions their payments move (delegated on p_client_id on Citus: every statement stays on the client's shard; an
-- item naming another client's payment is SKIPPED). p_items: an array of the operator's results, {payment_id, outcome (SUCCEEDED, FAILED or JAMMED),
-- payer_transaction_id, settled_at, payload (a direct charge's result callback, else null)}. Answers one row per item:
-- SETTLED, SKIPPED (no longer pending, or settled by an earlier copy in the group) or FAILED with the error.
CREATE OR REPLACE FUNCTION collection_settle_payments(p_client_id uuid, p_items jsonb)
RETURNS TABLE(payment_id bigint, result text, error_code text, error_message text, error_detail text)
LANGUAGE plpgsql
AS $fn$
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
  PERFORM 1 FROM payments p
  WHERE p.client_id = p_client_id AND p.id IN (SELECT (e->>'payment_id')::bigint FROM jsonb_array_elements(p_items) e)
  ORDER BY p.id FOR UPDATE;
  -- The in-flight and fee income accounts the entries need, keyed 'client kind currency', in a fixed order so
  -- that groups creating the same ones do not wait on each other crosswise.
  FOR v_account IN
    SELECT DISTINCT p.client_id, k.kind, p.currency::text AS currency
    FROM jsonb_array_elements(p_items) e JOIN payments p ON p.client_id = p_client_id AND p.id = (e->>'payment_id')::bigint
    CROSS JOIN (VALUES ('IN_FLIGHT_MOBILE_MONEY'), ('FEE_INCOME')) k(kind)
    WHERE e->>'outcome' = 'SUCCEEDED'
    ORDER BY p.client_id, k.kind, currency
  LOOP
    v_accounts := v_accounts || jsonb_build_object(concat_ws(' ', v_account.client_id, v_account.kind, v_account.currency),
      ledger_system_account(v_account.client_id, v_account.kind, v_account.currency));
  END LOOP;

  BEGIN
    SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO v_rows FROM collection_settle_apply(p_client_id, p_items, v_accounts) r;
  EXCEPTION WHEN OTHERS THEN
    -- The ledger refuses a whole batch when one of its entries is malformed (an account missing, of another
    -- client or currency): then each item on its own, so that only the item at fault fails.
    v_rows := '[]';
    FOR v_item IN SELECT e FROM jsonb_array_elements(p_items) e LOOP
      BEGIN
        v_rows := v_rows || (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]')
                             FROM collection_settle_apply(p_client_id, jsonb_build_array(v_item), v_accounts) r);
      EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_code = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL;
        v_rows := v_rows || jsonb_build_array(jsonb_build_object('payment_id', (v_item->>'payment_id')::bigint, 'result', 'FAILED',
          'error_code', v_code, 'error_message', v_message, 'error_detail', v_detail));
      END;
    END LOOP;
  END;

  -- The sessions of the checkouts' payments settled here follow once all of the group's payments are written.
  SELECT array_agg(DISTINCT p.checkout_session_id) INTO v_sessions
  FROM jsonb_to_recordset(v_rows) r(payment_id bigint, result text)
  JOIN payments p ON p.client_id = p_client_id AND p.id = r.payment_id
  WHERE r.result = 'SETTLED' AND p.checkout_session_id IS NOT NULL;
  IF v_sessions IS NOT NULL THEN
    PERFORM checkout_follow_payments(p_client_id, v_sessions, 'RESULT');
  END IF;

  RETURN QUERY SELECT * FROM jsonb_to_recordset(v_rows)
    AS x(payment_id bigint, result text, error_code text, error_message text, error_detail text);
END
$fn$;
