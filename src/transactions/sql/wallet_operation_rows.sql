-- The transaction records of a client's wallet operations as the money functions answer them: one row per operation
-- that has records, a jsonb array of wallet_transaction_rows, debit before credit.
CREATE OR REPLACE FUNCTION wallet_operation_rows(p_client_id uuid, p_operation_ids uuid[])
RETURNS TABLE(operation_id uuid, records jsonb)
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
  RETURN QUERY
  SELECT r.operation_id, jsonb_agg(to_jsonb(r) ORDER BY r.transaction_type = 'CREDIT', r.id)
  FROM wallet_transaction_rows(p_client_id, ARRAY(
         SELECT t.id FROM wallet_transactions t WHERE t.client_id = p_client_id AND t.operation_id = ANY (p_operation_ids))) r
  GROUP BY r.operation_id;
END
$fn$;
