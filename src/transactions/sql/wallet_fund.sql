-- An operator's funding of a wallet (wallet:fund, the seed's opening float) in one call: entry, operation and
-- transaction record, answered as wallet_money_batch answers a request (outcome, detail by name, records).
CREATE OR REPLACE FUNCTION wallet_fund(
  p_client_id uuid,
  p_account_number text,
  p_amount numeric,
  p_fingerprint text,
  p_narration text,
  p_transaction_date timestamp with time zone,
  p_receiving_states text[]
)
RETURNS TABLE(outcome text, detail jsonb, records jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_wallet record;
  v_settlement uuid;
  v_settlement_number text;
  v_entry bigint;
  v_before numeric;
  v_after numeric;
  v_operation uuid;
BEGIN
  -- Share-locked, as in wallet_money_batch: a state change or a deactivation waits for the funding to commit.
  SELECT a.id, a.currency::text AS currency, w.status::text AS status, p.is_active = 1 AS profile_active INTO v_wallet
  FROM ledger_accounts a JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
  JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id
  WHERE a.client_id = p_client_id AND a.account_number = p_account_number FOR SHARE OF w, p;
  IF v_wallet.id IS NULL THEN
    outcome := 'WALLET_NOT_FOUND'; detail := jsonb_build_object('account_number', p_account_number);
  ELSIF NOT v_wallet.profile_active THEN
    outcome := 'PROFILE_DEACTIVATED'; detail := jsonb_build_object('account_number', p_account_number);
  ELSIF NOT (v_wallet.status = ANY (p_receiving_states)) THEN
    outcome := 'WALLET_STATE';
    detail := jsonb_build_object('account_number', p_account_number, 'status', v_wallet.status, 'role', 'RECEIVE');
  END IF;
  IF outcome IS NOT NULL THEN
    RETURN NEXT;
    RETURN;
  END IF;

  v_settlement := ledger_system_account(p_client_id, 'SETTLEMENT', v_wallet.currency);
  SELECT min(e.entry_id), min(e.balance_before) FILTER (WHERE e.account_id = v_wallet.id),
         min(e.balance_after) FILTER (WHERE e.account_id = v_wallet.id)
    INTO v_entry, v_before, v_after
    FROM ledger_post_entry(p_client_id, 'WALLET_FUNDING', ARRAY[v_settlement, v_wallet.id], ARRAY[-p_amount, p_amount]) e;
  INSERT INTO wallet_operations (client_id, kind, source_transaction_id, request_fingerprint, entry_id)
  VALUES (p_client_id, 'FUNDING', NULL, p_fingerprint, v_entry)
  RETURNING wallet_operations.id INTO v_operation;
  SELECT a.account_number::text INTO v_settlement_number FROM ledger_accounts a WHERE a.client_id = p_client_id AND a.id = v_settlement;
  PERFORM wallet_record_transactions(p_operation_ids => ARRAY[v_operation], p_client_ids => ARRAY[p_client_id],
    p_account_ids => ARRAY[v_wallet.id], p_types => ARRAY['CREDIT'], p_sources => ARRAY['EXTERNAL_CREDIT'],
    p_currencies => ARRAY[v_wallet.currency], p_amounts => ARRAY[p_amount], p_fees => ARRAY[0::numeric],
    p_previous_balances => ARRAY[v_before], p_current_balances => ARRAY[v_after],
    p_other_party_accounts => ARRAY[v_settlement_number], p_narrations => ARRAY[p_narration],
    p_transaction_dates => ARRAY[p_transaction_date]);

  outcome := 'OK'; detail := '{}';
  SELECT rec.records INTO records FROM wallet_operation_rows(p_client_id, ARRAY[v_operation]) rec;
  RETURN NEXT;
END
$fn$;
