-- The client service a collection is made on, or the problem that refuses it.
CREATE OR REPLACE FUNCTION collecting_service(p_client_id uuid, p_service_code text, p_amount numeric)
RETURNS TABLE(problem text, details text[], service_id uuid, settlement_currency text, fee numeric)
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
DECLARE
  s record;
BEGIN
  SELECT cs.id, cs.is_active, cs.minimum_transaction_amount AS minimum, cs.maximum_transaction_amount AS maximum,
         la.currency::text AS currency
    INTO s
  FROM client_services cs LEFT JOIN ledger_accounts la ON la.id = cs.settlement_account_id
  WHERE cs.client_id = p_client_id AND cs.code = p_service_code;
  IF s.id IS NULL OR s.is_active <> 1 THEN
    RETURN QUERY SELECT 'SERVICE_UNKNOWN', NULL::text[], NULL::uuid, NULL::text, NULL::numeric;
  ELSIF s.currency IS NULL THEN
    RETURN QUERY SELECT 'SERVICE_NO_WALLET', NULL::text[], NULL::uuid, NULL::text, NULL::numeric;
  ELSIF p_amount < s.minimum OR p_amount > s.maximum THEN
    RETURN QUERY SELECT 'AMOUNT_BOUNDS', ARRAY[s.minimum::text, s.maximum::text], NULL::uuid, NULL::text, NULL::numeric;
  ELSE
    -- client_service_fee: migration LedgerBatchesWalletMoney.
    RETURN QUERY SELECT NULL::text, NULL::text[], s.id, s.currency, client_service_fee(s.id, p_amount);
  END IF;
END
$fn$;
