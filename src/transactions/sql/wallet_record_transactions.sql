-- Writes wallet transaction records, any number in one statement: one array per column, record i made of element i
-- of each, written in array order. An array left out is null for every record (a record without an id gets a new
-- one). The one writer of wallet_transactions: wallet_money_batch, wallet_fund and wallet_reverse call it once each.
CREATE OR REPLACE FUNCTION wallet_record_transactions(
  p_operation_ids uuid[],
  p_client_ids uuid[],
  p_account_ids uuid[],
  p_types text[],
  p_sources text[],
  p_currencies text[],
  p_amounts numeric[],
  p_fees numeric[],
  p_previous_balances numeric[],
  p_current_balances numeric[],
  p_other_party_accounts text[],
  p_narrations text[],
  p_transaction_dates timestamp with time zone[],
  p_ids uuid[] DEFAULT NULL,
  p_client_service_ids uuid[] DEFAULT NULL,
  p_other_party_transaction_hashes text[] DEFAULT NULL,
  p_source_transaction_ids text[] DEFAULT NULL,
  p_source_transaction_data jsonb[] DEFAULT NULL,
  p_original_currencies text[] DEFAULT NULL,
  p_original_amounts numeric[] DEFAULT NULL,
  p_exchange_rates numeric[] DEFAULT NULL
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  -- plpgsql, not sql: its plan is kept for the session, where an sql function's INSERT is planned at every call.
  INSERT INTO wallet_transactions (id, operation_id, client_id, account_id, client_service_id, transaction_type,
    transaction_source, currency, transaction_amount, transaction_fee, previous_balance, current_balance,
    other_party_account, other_party_transaction_hash, source_transaction_id, source_transaction_data,
    transaction_narration, transaction_date, original_currency, original_amount, exchange_rate)
  SELECT coalesce(r.id, gen_random_uuid()), r.operation_id, r.client_id, r.account_id, r.client_service_id, r.type,
         r.source, r.currency, r.amount, r.fee, r.previous_balance, r.current_balance, r.other_party_account,
         r.other_party_transaction_hash, r.source_transaction_id, r.source_transaction_data, r.narration,
         r.transaction_date, r.original_currency, r.original_amount, r.exchange_rate
  FROM unnest(p_ids, p_operation_ids, p_client_ids, p_account_ids, p_client_service_ids, p_types, p_sources, p_currencies,
              p_amounts, p_fees, p_previous_balances, p_current_balances, p_other_party_accounts,
              p_other_party_transaction_hashes, p_source_transaction_ids, p_source_transaction_data, p_narrations,
              p_transaction_dates, p_original_currencies, p_original_amounts, p_exchange_rates)
       WITH ORDINALITY AS r (id, operation_id, client_id, account_id, client_service_id, type, source, currency, amount,
              fee, previous_balance, current_balance, other_party_account, other_party_transaction_hash,
              source_transaction_id, source_transaction_data, narration, transaction_date, original_currency,
              original_amount, exchange_rate, n)
  ORDER BY r.n;
END
$fn$;
