-- The set-based body of collection_settle_payments (p_client_id and p_items as it takes them; p_accounts the in-flight and fee income
-- accounts by 'client kind currency'). A jammed payment moves only on an item marked "resolution": "OPERATOR" (a
-- person's charge:resolve with the operator's evidence). Posts the entries through ledger_post_entries and writes
-- statuses and callbacks.
CREATE OR REPLACE FUNCTION collection_settle_apply(p_client_id uuid, p_items jsonb, p_accounts jsonb)
RETURNS TABLE(payment_id bigint, result text, error_code text, error_message text, error_detail text)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
  -- payments: the ids of the payments moved; to_post: their entries, in the same order.
  v_moving       record;
  v_posted       jsonb := '{}';
  v_answers      jsonb;
  v_announced    record;
BEGIN
  WITH moving AS (
    SELECT DISTINCT ON (p.id) e.ord, p.id, p.client_id, p.total_amount, p.service_amount, p.merchant_fee, p.transaction_charge,
      s.settlement_account_id,
      (p_accounts ->> concat_ws(' ', p.client_id, 'IN_FLIGHT_MOBILE_MONEY', p.currency::text))::uuid AS in_flight_id,
      (p_accounts ->> concat_ws(' ', p.client_id, 'FEE_INCOME', p.currency::text))::uuid AS fee_income_id
    FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
    JOIN payments p ON p.client_id = p_client_id AND p.id = (e.item->>'payment_id')::bigint
    JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id
    WHERE e.item->>'outcome' = 'SUCCEEDED' AND (p.payment_status = payment_status_code('PENDING') OR (p.payment_status = payment_status_code('JAMMED') AND e.item->>'resolution' = 'OPERATOR'))
      AND (p.next_step IS DISTINCT FROM 'VERIFY_OTP' OR p.otp_verified_at IS NOT NULL)
    ORDER BY p.id, e.ord
  ), entries AS (
    SELECT row_number() OVER (ORDER BY m.ord)::int AS n, m.* FROM moving m
  )
  -- One PAYMENT entry per payment: in-flight to the settlement wallet (less the merchant fee) and fee income.
  SELECT array_agg(x.id ORDER BY x.n) AS payments,
         array_agg(ROW(x.client_id, 'PAYMENT',
                       (SELECT array_agg(ROW(l.account, l.amount)::ledger_line ORDER BY l.k)
                        FROM (VALUES (1, x.in_flight_id, -x.total_amount),
                                     (2, x.settlement_account_id, x.service_amount - x.merchant_fee),
                                     (3, x.fee_income_id, x.transaction_charge + x.merchant_fee)) l(k, account, amount)
                        WHERE l.amount <> 0))::ledger_entry_to_post ORDER BY x.n) AS to_post
    INTO v_moving
  FROM entries x;

  IF v_moving.payments IS NOT NULL THEN
    SELECT jsonb_object_agg(r.entry_no::text, jsonb_build_object('entry_id', r.entry_id, 'refused', r.refused_account)) INTO v_posted
    FROM (SELECT DISTINCT ON (pe.entry_no) pe.entry_no, pe.entry_id, pe.refused_account
          FROM ledger_post_entries(v_moving.to_post) pe
          ORDER BY pe.entry_no) r;
  END IF;

  WITH items AS (
    SELECT e.ord, (e.item->>'payment_id')::bigint AS pid, e.item,
      row_number() OVER (PARTITION BY e.item->>'payment_id' ORDER BY e.ord) = 1 AS first
    FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
  ), moved AS (
    -- The settlement time is decided here, not in the UPDATE: Citus refuses a CASE over a text-to-timestamptz cast
    -- (STABLE) in an UPDATE of a distributed table.
    SELECT i.ord, i.item, i.item->>'outcome' AS outcome, p.id,
      CASE WHEN i.item->>'outcome' = 'JAMMED' THEN p.settled_at ELSE (i.item->>'settled_at')::timestamptz END AS settled_at,
      (v_posted -> array_position(v_moving.payments, p.id)::text ->> 'entry_id')::bigint AS entry_id,
      v_posted -> array_position(v_moving.payments, p.id)::text ->> 'refused' AS refused
    FROM items i JOIN payments p ON p.client_id = p_client_id AND p.id = i.pid
    WHERE i.first AND (p.payment_status = payment_status_code('PENDING') OR (p.payment_status = payment_status_code('JAMMED') AND i.item->>'resolution' = 'OPERATOR')) AND (p.next_step IS DISTINCT FROM 'VERIFY_OTP' OR p.otp_verified_at IS NOT NULL)
  ), updated AS (
    UPDATE payments p SET
      -- Searched: Citus 13.2 garbles `CASE m.outcome WHEN …` around the inlined status codes (the parser check's
      -- case-in-simple-case).
      payment_status = CASE WHEN m.outcome = 'SUCCEEDED' THEN payment_status_code('SUCCESSFUL')
                            WHEN m.outcome = 'FAILED' THEN payment_status_code('FAILED')
                            ELSE payment_status_code('JAMMED') END,
      entry_id = m.entry_id,
      payer_transaction_id = CASE WHEN m.outcome = 'SUCCEEDED' THEN m.item->>'payer_transaction_id' ELSE p.payer_transaction_id END,
      settled_at = m.settled_at,
      updated_at = now()
    FROM moved m WHERE p.client_id = p_client_id AND p.id = m.id AND m.refused IS NULL
  )
  SELECT jsonb_agg(jsonb_build_object('ord', i.ord, 'payment_id', i.pid,
           'result', CASE WHEN m.id IS NULL THEN 'SKIPPED' WHEN m.refused IS NOT NULL THEN 'FAILED' ELSE 'SETTLED' END,
           'refused', m.refused) ORDER BY i.ord)
    INTO v_answers
  FROM items i LEFT JOIN moved m ON m.ord = i.ord;

  -- The result callbacks of the direct charges settled here (an item with a payload), each scheduled on its own: the
  -- payments are read first (on Citus a function reading shards may not run inside a query on a shard).
  FOR v_announced IN
    SELECT p.client_id, p.external_reference::text AS external_reference, p.callback_url::text AS callback_url,
           p.notify_client OR p.notify_originator AS notify, e.item->'payload' AS payload
    FROM jsonb_array_elements(p_items) WITH ORDINALITY e(item, ord)
    JOIN jsonb_to_recordset(v_answers) a(ord bigint, result text) ON a.ord = e.ord
    JOIN payments p ON p.client_id = p_client_id AND p.id = (e.item->>'payment_id')::bigint
    WHERE a.result = 'SETTLED' AND jsonb_typeof(e.item->'payload') = 'object'
    ORDER BY e.ord
  LOOP
    PERFORM collection_payment_announce(v_announced.client_id, v_announced.external_reference, v_announced.callback_url,
                                        v_announced.notify, v_announced.payload);
  END LOOP;

  RETURN QUERY
  SELECT a.payment_id, a.result,
    CASE WHEN a.refused IS NOT NULL THEN 'LF001' END,
    CASE WHEN a.refused IS NOT NULL THEN format('account %s would go below its minimum balance', a.refused) END,
    a.refused
  FROM jsonb_to_recordset(v_answers) a(ord bigint, payment_id bigint, result text, refused text)
  ORDER BY a.ord;
END
$fn$;
