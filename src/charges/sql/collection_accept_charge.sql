-- Accepts one charge: replay or 409, the caller's own failed check, service, currency and fee, split partners, then the
-- payment and its settlement outbox row. A refusal is a jsonb object: `problem` and its values by name.
CREATE OR REPLACE FUNCTION collection_accept_charge(
  p_client_id uuid,
  p_service_code text,
  p_fingerprint text,
  p_caller_check text,
  p_charge jsonb,
  p_splits jsonb,
  p_payment_url_prefix text,
  p_settle_topic text,
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
  v_id       bigint;
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
    SELECT * INTO v_fee FROM collection_merchant_fee(v_service.service_id, c.service_amount, c.add_transaction_charge);
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

  v_id := nextval(pg_get_serial_sequence('payments', 'id'));
  INSERT INTO payments (id, client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
    origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number,
    currency, country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge,
    payment_method_code, extra_data, description, notify_client, notify_originator, callback_url, next_step, payment_url,
    split_settlements)
  VALUES (v_id, p_client_id, v_service.service_id, NULL, c.external_reference, p_fingerprint,
    c.origin_channel_code, c.originator_msisdn, c.payer_msisdn, c.payer_name, c.payer_email, c.account_number, c.invoice_number,
    c.currency, c.country_code, c.service_amount, c.transaction_charge, c.service_amount + c.transaction_charge, v_fee.fee,
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
  RETURN QUERY SELECT 'CREATED', NULL::jsonb, v_id, c.service_amount, c.transaction_charge,
    c.service_amount + c.transaction_charge, CASE WHEN c.next_step = 'AUTHORIZE_TRANSACTION' THEN p_payment_url_prefix || v_id END,
    c.next_step::text;
END
$fn$;
