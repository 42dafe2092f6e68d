-- Initiates one checkout session: replay or 409, the caller's own failed check, service, split partners, then the session
-- and its expiry outbox row. A refusal is a jsonb object: `problem` and its values by name.
CREATE OR REPLACE FUNCTION collection_initiate_checkout(
  p_client_id uuid,
  p_service_code text,
  p_fingerprint text,
  p_caller_check text,
  p_session jsonb,
  p_splits jsonb,
  p_expire_topic text
)
RETURNS TABLE(
  outcome text,
  refusal jsonb,
  merchant_transaction_id text,
  checkout_reference text,
  currency text,
  amount numeric,
  expires_at timestamp with time zone
)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
  s          checkout_sessions%ROWTYPE;
  v_service  record;
  v_splits   record;
  v_refusal  jsonb;
  v_id       bigint;
BEGIN
  s := jsonb_populate_record(NULL::checkout_sessions, p_session);
  RETURN QUERY SELECT * FROM collection_checkout_by_reference(p_client_id, s.merchant_transaction_id, p_fingerprint);
  IF FOUND THEN RETURN; END IF;
  -- p_caller_check: REQUEST (a redirect or callback URL) refuses here; SPLITS (the split list's shape) where partners
  -- are checked.
  IF p_caller_check = 'REQUEST' THEN
    RETURN QUERY SELECT 'REFUSED', jsonb_build_object('problem', 'REQUEST'), NULL::text, NULL::text, NULL::text, NULL::numeric,
      NULL::timestamptz;
    RETURN;
  END IF;

  SELECT * INTO v_service FROM collecting_service(p_client_id, p_service_code, s.amount);
  v_refusal := v_service.refusal;
  IF v_refusal IS NULL AND p_caller_check = 'SPLITS' THEN
    v_refusal := jsonb_build_object('problem', 'REQUEST');
  END IF;
  IF v_refusal IS NULL THEN
    SELECT * INTO v_splits FROM split_settlements_check(p_client_id, v_service.service_id, v_service.settlement_currency, s.amount, p_splits);
    v_refusal := v_splits.refusal;
  END IF;
  IF v_refusal IS NOT NULL THEN
    RETURN QUERY SELECT 'REFUSED', v_refusal, NULL::text, NULL::text, NULL::text, NULL::numeric, NULL::timestamptz;
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
  INSERT INTO outbox (client_id, topic, payload, available_at) VALUES (p_client_id, p_expire_topic, jsonb_build_object('sessionId', v_id::text), s.expires_at);
  RETURN QUERY SELECT 'CREATED', NULL::jsonb, s.merchant_transaction_id::text, s.checkout_reference::text,
    v_service.settlement_currency, s.amount, s.expires_at;
END
$fn$;
