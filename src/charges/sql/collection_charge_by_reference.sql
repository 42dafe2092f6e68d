-- A client's charge by its reference, for a replay (REPLAY: same fingerprint) or a 409 (CONFLICT).
CREATE OR REPLACE FUNCTION collection_charge_by_reference(p_client_id uuid, p_reference text, p_fingerprint text)
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
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT CASE WHEN p.request_fingerprint = p_fingerprint THEN 'REPLAY' ELSE 'CONFLICT' END, NULL::jsonb,
    p.id, p.service_amount, p.transaction_charge, p.total_amount, p.payment_url::text, p.next_step::text
  FROM payments p
  WHERE p.client_id = p_client_id AND p.external_reference = p_reference AND p.checkout_session_id IS NULL;
END
$fn$;
