-- The client service a collection is made on, or the refusal (jsonb, `problem` and its values by name) that refuses it.
CREATE OR REPLACE FUNCTION collecting_service(p_client_id uuid, p_service_code text, p_amount numeric)
RETURNS TABLE(refusal jsonb, service_id uuid, settlement_currency text)
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
DECLARE
  s record;
  v_bounds jsonb;
BEGIN
  SELECT cs.id, cs.is_active, cs.minimum_transaction_amount AS minimum, cs.maximum_transaction_amount AS maximum,
         la.currency::text AS currency
    INTO s
  FROM client_services cs LEFT JOIN ledger_accounts la ON la.client_id = cs.client_id AND la.id = cs.settlement_account_id
  WHERE cs.client_id = p_client_id AND cs.code = p_service_code;
  v_bounds := client_service_amount_bounds(p_amount, s.minimum, s.maximum);
  IF s.id IS NULL OR s.is_active <> 1 THEN
    RETURN QUERY SELECT jsonb_build_object('problem', 'SERVICE_UNKNOWN'), NULL::uuid, NULL::text;
  ELSIF s.currency IS NULL THEN
    RETURN QUERY SELECT jsonb_build_object('problem', 'SERVICE_NO_WALLET'), NULL::uuid, NULL::text;
  ELSIF v_bounds IS NOT NULL THEN
    RETURN QUERY SELECT jsonb_build_object('problem', 'AMOUNT_BOUNDS') || v_bounds, NULL::uuid, NULL::text;
  ELSE
    RETURN QUERY SELECT NULL::jsonb, s.id, s.currency;
  END IF;
END
$fn$;
