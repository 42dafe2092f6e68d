-- Accepts one bulk airtime request: a reference already taken, the paying service (airtime_service_code,
-- paying_service) and each amount's bounds, then the idempotency claim, float_reserve (one entry, a hold per
-- recipient; a float short of the total gives the claim up), the request, its recipients (positions 1..n,
-- p_recipients in request order) and their processing jobs. A refusal is a row: its outcome, and in detail what its
-- wording needs (AirtimeAcceptance, src/airtime/airtime.repository.ts). Called per item by airtime_accept_batch.
CREATE OR REPLACE FUNCTION airtime_accept(
  p_client_id uuid,
  p_reference text,
  p_service_code text,
  p_recipients jsonb,
  p_message text,
  p_rail text,
  p_topic text,
  p_recipients_per_job integer,
  p_process_at timestamp with time zone,
  p_paying_states text[]
)
RETURNS TABLE(outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_service_code  text;
  v_service       record;
  v_phone_numbers text[];
  v_amounts       numeric[];
  v_fees          numeric[];
  v_request       bigint;
  v_reserved      record;
  v_count         int;
BEGIN
  IF EXISTS (SELECT 1 FROM airtime_requests q WHERE q.client_id = p_client_id AND q.reference = p_reference) THEN
    outcome := 'DUPLICATE';
    RETURN NEXT;
    RETURN;
  END IF;
  v_service_code := airtime_service_code(p_client_id => p_client_id, p_service_code => p_service_code);
  IF v_service_code IS NULL THEN
    outcome := 'NO_DEFAULT_SERVICE';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT * INTO v_service
  FROM paying_service(p_client_id => p_client_id, p_service_code => v_service_code, p_paying_states => p_paying_states);
  IF v_service.refusal IS NOT NULL THEN
    outcome := v_service.refusal;
    detail := jsonb_build_object('service_code', v_service_code);
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT array_agg(r.phone_number ORDER BY r.n), array_agg(r.amount ORDER BY r.n) INTO v_phone_numbers, v_amounts
  FROM ROWS FROM (jsonb_to_recordset(p_recipients) AS (phone_number text, amount numeric)) WITH ORDINALITY
    AS r (phone_number, amount, n);
  v_count := cardinality(v_amounts);
  SELECT a.outside_bounds || jsonb_build_object('recipient_index', l.n - 1) INTO detail
  FROM unnest(v_amounts) WITH ORDINALITY AS l (amount, n)
  CROSS JOIN LATERAL (SELECT client_service_amount_bounds(l.amount, v_service.minimum_amount, v_service.maximum_amount))
    AS a (outside_bounds)
  WHERE a.outside_bounds IS NOT NULL
  ORDER BY l.n LIMIT 1;
  IF detail IS NOT NULL THEN
    outcome := 'AMOUNT_BOUNDS';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT array_agg(client_service_fee(p_client_id, v_service.service_id, l.amount) ORDER BY l.n) INTO v_fees
  FROM unnest(v_amounts) WITH ORDINALITY AS l (amount, n);
  INSERT INTO airtime_requests (client_id, reference, client_service_id, currency, recipient_count)
  VALUES (p_client_id, p_reference, v_service.service_id, v_service.float_currency, v_count)
  ON CONFLICT (client_id, reference) DO NOTHING
  RETURNING id INTO v_request;
  IF v_request IS NULL THEN
    outcome := 'DUPLICATE';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT * INTO v_reserved
  FROM float_reserve(p_client_id => p_client_id, p_float_account_id => v_service.float_account_id,
                     p_currency => v_service.float_currency, p_rail => p_rail,
                     p_reservations => array_fill(1, ARRAY[v_count]), p_amounts => v_amounts, p_fees => v_fees);
  IF v_reserved.reservation_id IS NULL THEN
    -- The float is short of the total: the claim is given up, so the reference stays free.
    DELETE FROM airtime_requests WHERE client_id = p_client_id AND id = v_request;
    outcome := 'INSUFFICIENT_FLOAT';
    RETURN NEXT;
    RETURN;
  END IF;
  UPDATE airtime_requests SET reservation_id = v_reserved.reservation_id WHERE client_id = p_client_id AND id = v_request;
  INSERT INTO airtime_recipients (client_id, request_id, position, phone_number, amount, fee, hold_id, message)
  SELECT p_client_id, v_request, r.n, r.phone_number, r.amount, r.fee, r.hold_id, p_message
  FROM unnest(v_phone_numbers, v_amounts, v_fees, v_reserved.hold_ids) WITH ORDINALITY
    AS r (phone_number, amount, fee, hold_id, n);
  INSERT INTO outbox (client_id, topic, payload, available_at)
  SELECT p_client_id, p_topic,
         jsonb_build_object('requestId', v_request::text, 'first', f::text,
                            'last', least(v_count, f + p_recipients_per_job - 1)::text),
         p_process_at
  FROM generate_series(1, v_count, p_recipients_per_job) AS f;
  outcome := 'ACCEPTED';
  RETURN NEXT;
END
$fn$;
