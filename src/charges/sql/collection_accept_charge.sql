-- Accepts one charge: replay or 409, the caller's own failed check, service, currency and fee, split partners, then the
-- payment and its settlement outbox row (p_settle_topic, its payload the payment's id under p_settle_key). A refusal is a
-- jsonb object: `problem` and its values by name.
CREATE OR REPLACE FUNCTION collection_accept_charge(
  p_client_id uuid,
  p_service_code text,
  p_fingerprint text,
  p_caller_check text,
  p_charge jsonb,
  p_splits jsonb,
  p_payment_url_prefix text,
  p_settle_topic text,
  p_settle_key text,
  p_settle_at timestamp with time zone
)
RETURNS TABLE(
  outcome text,
  refusal jsonb,
  id bigint,
  service_amount numeric,
  transaction_charge numeric,
  total_amount numeric,
  payment_url text,
  next_step text
)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
  c          payments%ROWTYPE;
  v_service  record;
  v_fee      record;
  v_splits   record;
  v_refusal  jsonb;
  v_payment  payments;
BEGIN
  c := jsonb_populate_record(NULL::payments, p_charge);
  RETURN QUERY SELECT * FROM collection_charge_by_reference(p_client_id, c.external_reference, p_fingerprint);
  IF FOUND THEN RETURN; END IF;
  -- p_caller_check: REQUEST (a callback URL) refuses here; SPLITS (the split list's shape) where partners are checked.
  IF p_caller_check = 'REQUEST' THEN
    RETURN QUERY SELECT 'REFUSED', jsonb_build_object('problem', 'REQUEST'), NULL::bigint, NULL::numeric, NULL::numeric,
      NULL::numeric, NULL::text, NULL::text;
    RETURN;
  END IF;

  SELECT * INTO v_service FROM collecting_service(p_client_id, p_service_code, c.service_amount);
  v_refusal := v_service.refusal;
  IF v_refusal IS NULL AND v_service.settlement_currency <> c.currency THEN
    v_refusal := jsonb_build_object('problem', 'CURRENCY', 'currency', v_service.settlement_currency);
  END IF;
  IF v_refusal IS NULL THEN
    SELECT * INTO v_fee FROM collection_merchant_fee(p_client_id, v_service.service_id, c.service_amount, c.add_transaction_charge);
    v_refusal := v_fee.refusal;
  END IF;
  IF v_refusal IS NULL AND p_caller_check = 'SPLITS' THEN
    v_refusal := jsonb_build_object('problem', 'REQUEST');
  END IF;
  IF v_refusal IS NULL THEN
    SELECT * INTO v_splits FROM split_settlements_check(p_client_id, v_service.service_id, c.currency, c.service_amount, p_splits);
    v_refusal := v_splits.refusal;
  END IF;
  IF v_refusal IS NOT NULL THEN
    RETURN QUERY SELECT 'REFUSED', v_refusal, NULL::bigint, NULL::numeric, NULL::numeric, NULL::numeric, NULL::text, NULL::text;
    RETURN;
  END IF;

  c.id := nextval(pg_get_serial_sequence('payments', 'id'));
  c.client_id := p_client_id;
  c.client_service_id := v_service.service_id;
  c.request_fingerprint := p_fingerprint;
  c.merchant_fee := v_fee.fee;
  c.payment_url := CASE WHEN c.next_step = 'AUTHORIZE_TRANSACTION' THEN p_payment_url_prefix || c.id END;
  c.split_settlements := v_splits.shares;
  v_payment := collection_record_payment(c);
  IF v_payment.id IS NULL THEN
    -- A concurrent duplicate committed first.
    RETURN QUERY SELECT * FROM collection_charge_by_reference(p_client_id, c.external_reference, p_fingerprint);
    RETURN;
  END IF;
  -- An OTP charge is submitted once the payer proves the OTP; the others settle after the operator's delay.
  IF v_payment.next_step IS DISTINCT FROM 'VERIFY_OTP' THEN
    INSERT INTO outbox (client_id, topic, payload, available_at)
    VALUES (p_client_id, p_settle_topic, jsonb_build_object(p_settle_key, v_payment.id::text), p_settle_at);
  END IF;
  RETURN QUERY SELECT 'CREATED', NULL::jsonb, v_payment.id, v_payment.service_amount, v_payment.transaction_charge,
    v_payment.total_amount, v_payment.payment_url::text, v_payment.next_step::text;
END
$fn$;
