-- Accepts one bulk airtime request: checks, idempotency claim, float_reserve, the request, its recipients and their
-- jobs; refusals as a row.
CREATE OR REPLACE FUNCTION airtime_accept(
  p_client_id uuid,
  p_reference text,
  p_service_code text,
  p_phone_numbers text[],
  p_amounts numeric[],
  p_message text,
  p_topic text,
  p_recipients_per_job integer,
  p_process_at timestamp with time zone,
  p_paying_states text[]
)
RETURNS TABLE(
  outcome text,
  service_code text,
  recipient_index integer,
  minimum_amount numeric,
  maximum_amount numeric
)
LANGUAGE plpgsql
AS $fn$
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
