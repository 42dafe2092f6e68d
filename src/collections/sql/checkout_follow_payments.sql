-- Moves checkout sessions to the status their payments give and schedules each move's checkout callback: the one home
-- of a session's status once it is open (the payer starting a payment sets 851, CheckoutSessionsService.startPayment).
-- p_cause is what happened to them:
--   RESULT    payments settled: paid 801, else a jammed payment 850 (no callback), part paid 802, nothing paid and its
--             time up 820, unpaid 803;
--   REVERSAL  a payment reversed: part paid 802 while a payment stands, else reversed 840;
--   EXPIRY    the session's end came: unpaid (803) and its time up, it expires (820); any other stays as it is (a
--             part-paid one keeps 802: 820 is "expired with no payments").
-- Whether a session's time is up is checkout_session_ended's, on the database clock. The sessions are p_client_id's.
CREATE OR REPLACE FUNCTION checkout_follow_payments(p_client_id uuid, p_sessions bigint[], p_cause text)
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_notify bigint[];
  v_ended bigint[];
  v_session record;
BEGIN
  IF p_cause NOT IN ('RESULT', 'REVERSAL', 'EXPIRY') THEN
    RAISE EXCEPTION 'checkout_follow_payments: unknown cause %', p_cause;
  END IF;
  PERFORM 1 FROM checkout_sessions cs WHERE cs.client_id = p_client_id AND cs.id = ANY(p_sessions) ORDER BY cs.id FOR UPDATE;
  -- Asked apart: on Citus an UPDATE may not decide by a VOLATILE function inside CASE, even from the CTE it reads.
  SELECT array_agg(cs.id) INTO v_ended FROM checkout_sessions cs
  WHERE cs.client_id = p_client_id AND cs.id = ANY(p_sessions) AND checkout_session_ended(cs.expires_at);
  WITH tally AS (
    SELECT cs.id, cs.status, cs.amount, coalesce(cs.id = ANY(v_ended), false) AS ended,
      coalesce(sum(p.service_amount) FILTER (WHERE p.payment_status = payment_status_code('SUCCESSFUL')), 0) AS paid,
      coalesce(bool_or(p.payment_status = payment_status_code('JAMMED')), false) AS jammed
    FROM checkout_sessions cs LEFT JOIN payments p ON p.client_id = cs.client_id AND p.checkout_session_id = cs.id
    WHERE cs.client_id = p_client_id AND cs.id = ANY(p_sessions)
    GROUP BY cs.id, cs.client_id
  ), next AS (
    -- Searched, not `CASE p_cause WHEN …`: Citus 13.2 sends the simple form to the shard as a comparison of the cause
    -- with the first inner WHEN ("operator does not exist: text = boolean").
    SELECT t.id, p_cause = 'RESULT' AND t.jammed AS quiet, CASE
      WHEN p_cause = 'RESULT' THEN CASE WHEN t.paid >= t.amount THEN checkout_status_code('PAID')
                              WHEN t.jammed THEN checkout_status_code('JAMMED')
                              WHEN t.paid > 0 THEN checkout_status_code('PART_PAID')
                              WHEN t.ended THEN checkout_status_code('EXPIRED')
                              ELSE checkout_status_code('UNPAID') END
      WHEN p_cause = 'REVERSAL' THEN CASE WHEN t.paid > 0 THEN checkout_status_code('PART_PAID') ELSE checkout_status_code('REVERSED') END
      WHEN p_cause = 'EXPIRY' THEN CASE WHEN t.status = checkout_status_code('UNPAID') AND t.ended
                              THEN checkout_status_code('EXPIRED') END
    END AS status
    FROM tally t
  ), moved AS (
    UPDATE checkout_sessions cs SET status = n.status, updated_at = now()
    FROM next n WHERE cs.client_id = p_client_id AND cs.id = n.id AND n.status IS NOT NULL
    RETURNING cs.id, n.quiet
  )
  SELECT array_agg(m.id ORDER BY m.id) FILTER (WHERE NOT m.quiet) INTO v_notify FROM moved m;

  -- Read first, then scheduled one by one: on Citus a function reading shards may not run inside a query on a shard.
  FOR v_session IN
    SELECT cs.id, cs.status, cs.merchant_transaction_id::text AS merchant_transaction_id, cs.callback_url::text AS callback_url
    FROM checkout_sessions cs WHERE cs.client_id = p_client_id AND cs.id = ANY(v_notify) ORDER BY cs.id
  LOOP
    PERFORM callback_schedule(p_client_id, 'collections', 'checkout_' || v_session.status, v_session.merchant_transaction_id,
                              ARRAY[v_session.callback_url], false, checkout_result_payload(p_client_id, v_session.id)::jsonb);
  END LOOP;
END
$fn$;
