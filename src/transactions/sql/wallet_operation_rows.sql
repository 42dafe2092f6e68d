-- The transaction records of a wallet operation as the money functions answer them: one row, a jsonb array of
-- wallet_transaction_rows, debit before credit (null for no operation).
CREATE OR REPLACE FUNCTION wallet_operation_rows(p_operation_id uuid)
RETURNS TABLE(records jsonb)
LANGUAGE sql STABLE
AS $fn$
SELECT jsonb_agg(to_jsonb(r) ORDER BY r.transaction_type = 'CREDIT', r.id)
FROM wallet_transaction_rows() r
WHERE r.operation_id = p_operation_id
$fn$;
