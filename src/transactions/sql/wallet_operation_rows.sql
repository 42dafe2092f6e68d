-- The transaction records of a client's wallet operations as the money functions answer them: one row per operation
-- that has records, a jsonb array of wallet_transaction_rows, debit before credit.
CREATE OR REPLACE FUNCTION wallet_operation_rows(p_client_id uuid, p_operation_ids uuid[])
RETURNS TABLE(operation_id uuid, records jsonb)
LANGUAGE plpgsql STABLE
AS $fn$
DECLARE
  v_ids uuid[];
BEGIN
  -- The ids read first: on Citus a function reading shards may not run inside a query on a shard.
  SELECT array_agg(t.id) INTO v_ids FROM wallet_transactions t WHERE t.client_id = p_client_id AND t.operation_id = ANY (p_operation_ids);
  RETURN QUERY
  SELECT r.operation_id, jsonb_agg(to_jsonb(r) ORDER BY r.transaction_type = 'CREDIT', r.id)
  FROM wallet_transaction_rows(p_client_id, v_ids) r
  GROUP BY r.operation_id;
END
$fn$;
