-- The merchant's fee on a collection (client_service_fee; none when the payer pays the transaction charge instead),
-- and the refusal when it would leave the merchant nothing: the fee must be below the amount.
CREATE OR REPLACE FUNCTION collection_merchant_fee(
  p_client_id uuid, p_service_id uuid, p_amount numeric, p_payer_pays_charge boolean
)
RETURNS TABLE(fee numeric, refusal jsonb)
LANGUAGE sql STABLE
AS $fn$
SELECT f.fee, CASE WHEN f.fee >= p_amount THEN jsonb_build_object('problem', 'FEE', 'fee', f.fee::text) END
FROM (SELECT CASE WHEN p_payer_pays_charge THEN 0 ELSE client_service_fee(p_client_id, p_service_id, p_amount) END AS fee) f
$fn$;
