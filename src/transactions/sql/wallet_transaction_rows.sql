-- The wallet transaction records of a client named by id, in the shape the API's transaction object is made from
-- (TransactionRow, src/transactions/transaction-records.ts): the one place that shape is written. Amounts are text,
-- so a jsonb answer carries them exactly. Callers choose the ids and the order. PL/pgSQL with the client: Citus plans
-- neither a LANGUAGE sql join with parameters nor one inlined into a query with parameters, and every statement
-- names its shard.
CREATE OR REPLACE FUNCTION wallet_transaction_rows(p_client_id uuid, p_ids uuid[])
RETURNS TABLE(
  id uuid,
  operation_id uuid,
  operation_kind text,
  account_id uuid,
  account_number text,
  account_kind text,
  client_service_code text,
  transaction_type text,
  transaction_source text,
  currency text,
  transaction_amount text,
  transaction_fee text,
  previous_balance text,
  current_balance text,
  other_party_account text,
  other_party_transaction_hash text,
  source_transaction_id text,
  source_transaction_data jsonb,
  transaction_narration text,
  transaction_date timestamp with time zone,
  original_currency text,
  original_amount text,
  exchange_rate text
)
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
RETURN QUERY
SELECT t.id, t.operation_id, o.kind::text, t.account_id, a.account_number::text, a.kind::text, s.code::text,
  t.transaction_type::text, t.transaction_source::text, t.currency::text, t.transaction_amount::text,
  t.transaction_fee::text, t.previous_balance::text, t.current_balance::text, t.other_party_account::text,
  t.other_party_transaction_hash::text, t.source_transaction_id::text, t.source_transaction_data,
  t.transaction_narration::text, t.transaction_date, t.original_currency::text, t.original_amount::text,
  t.exchange_rate::text
FROM wallet_transactions t
JOIN wallet_operations o ON o.client_id = t.client_id AND o.id = t.operation_id
JOIN ledger_accounts a ON a.client_id = t.client_id AND a.id = t.account_id
LEFT JOIN client_services s ON s.client_id = t.client_id AND s.id = t.client_service_id
WHERE t.client_id = p_client_id AND t.id = ANY (p_ids);
END
$fn$;
