-- Moves each checkout session to the status its payments give (paid, part paid, ...) and schedules its checkout
-- callback.
CREATE OR REPLACE FUNCTION checkout_follow_payments(p_sessions bigint[])
RETURNS void
LANGUAGE plpgsql
AS $fn$
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
