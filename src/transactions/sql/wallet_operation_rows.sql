-- The transaction records of wallet operations as the money functions answer them: per operation, a jsonb array of
-- wallet_transaction_rows, debit before credit.
CREATE OR REPLACE FUNCTION wallet_operation_rows(p_operation_ids uuid[])
RETURNS TABLE(operation_id uuid, records jsonb)
LANGUAGE sql STABLE
AS $fn$
SELECT r.operation_id, jsonb_agg(to_jsonb(r) ORDER BY r.transaction_type = 'CREDIT', r.id)
FROM wallet_transaction_rows() r
WHERE r.operation_id = ANY (p_operation_ids)
GROUP BY r.operation_id
$fn$;
