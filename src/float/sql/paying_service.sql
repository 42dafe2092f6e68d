-- The client service a payout is paid from, given the float states that may pay.
CREATE OR REPLACE FUNCTION paying_service(p_client_id uuid, p_service_code text, p_paying_states text[])
RETURNS TABLE(
  refusal text,
  service_id uuid,
  float_account_id uuid,
  float_currency text,
  minimum_amount numeric,
  maximum_amount numeric
)
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT CASE
           WHEN s.id IS NULL OR s.is_active <> 1 THEN 'SERVICE_NOT_ALLOWED'
           WHEN f.id IS NULL THEN 'NO_FLOAT'
           WHEN w.status IS NULL OR w.status <> ALL (p_paying_states) OR p.is_active <> 1 THEN 'FLOAT_NOT_ACTIVE'
         END,
         s.id, f.id, f.currency::text, s.minimum_transaction_amount, s.maximum_transaction_amount
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN client_services s ON s.client_id = p_client_id AND s.code = p_service_code
  LEFT JOIN ledger_accounts f ON f.client_id = s.client_id AND f.id = s.settlement_account_id
  LEFT JOIN wallets w ON w.client_id = f.client_id AND w.id = f.id
  LEFT JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id;
END
$fn$;
