-- The transaction records of a wallet operation in the answer's shape.
CREATE OR REPLACE FUNCTION wallet_operation_rows(p_operation_id uuid)
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
  transaction_amount numeric,
  transaction_fee numeric,
  previous_balance numeric,
  current_balance numeric,
  other_party_account text,
  other_party_transaction_hash text,
  source_transaction_id text,
  source_transaction_data jsonb,
  transaction_narration text,
  transaction_date timestamp with time zone,
  original_currency text,
  original_amount numeric,
  exchange_rate numeric
)
LANGUAGE sql STABLE
AS $fn$
SELECT t.id, t.operation_id, o.kind::text, t.account_id, a.account_number::text, a.kind::text, s.code::text,
  t.transaction_type::text, t.transaction_source::text, t.currency::text, t.transaction_amount, t.transaction_fee,
  t.previous_balance, t.current_balance, t.other_party_account::text, t.other_party_transaction_hash::text,
  t.source_transaction_id::text, t.source_transaction_data, t.transaction_narration::text, t.transaction_date,
  t.original_currency::text, t.original_amount, t.exchange_rate
FROM wallet_transactions t
JOIN wallet_operations o ON o.id = t.operation_id
JOIN ledger_accounts a ON a.id = t.account_id
LEFT JOIN client_services s ON s.id = t.client_service_id
WHERE t.operation_id = p_operation_id
ORDER BY t.transaction_type = 'CREDIT', t.id
$fn$;
