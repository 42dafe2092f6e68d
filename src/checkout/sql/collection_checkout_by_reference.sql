-- A client's checkout session by its merchant transaction id, for a replay (REPLAY: same fingerprint) or a 409 (CONFLICT).
CREATE OR REPLACE FUNCTION collection_checkout_by_reference(
  p_client_id uuid,
  p_merchant_transaction_id text,
  p_fingerprint text
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
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT CASE WHEN cs.request_fingerprint = p_fingerprint THEN 'REPLAY' ELSE 'CONFLICT' END, NULL::jsonb,
    cs.merchant_transaction_id::text, cs.checkout_reference::text, cs.currency::text, cs.amount, cs.expires_at
  FROM checkout_sessions cs
  WHERE cs.client_id = p_client_id AND cs.merchant_transaction_id = p_merchant_transaction_id;
END
$fn$;
