-- Reverses a wallet transaction in one call: checks, idempotency claim, ledger_reverse_entry and the reversal
-- records, answered as an outcome and, for REVERSED and REPLAY, the records (wallet_operation_rows).
CREATE OR REPLACE FUNCTION wallet_reverse(
  p_client_id uuid,
  p_transaction_id uuid,
  p_reference text,
  p_fingerprint text,
  p_narration text
)
RETURNS TABLE(outcome text, records jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_known     record;
  v_target    record;
  v_entry     bigint;
  v_accounts  uuid[];
  v_amounts   numeric[];
  v_afters    numeric[];
  v_operation uuid;
  v_closed    text;
  v_leg_ids   uuid[] := ARRAY[gen_random_uuid(), gen_random_uuid()];
  v_other_leg uuid := gen_random_uuid();
  -- The reversal's records, one array per column (wallet_record_transactions).
  r_ids uuid[]; r_accounts uuid[]; r_types text[]; r_sources text[]; r_currencies text[]; r_amounts numeric[];
  r_fees numeric[]; r_previous_balances numeric[]; r_current_balances numeric[]; r_other_parties text[];
  r_other_legs text[]; r_data jsonb[]; r_narrations text[]; r_original_currencies text[]; r_original_amounts numeric[];
  r_rates numeric[];
BEGIN
  IF p_reference IS NOT NULL THEN
    SELECT o.id, o.kind, o.request_fingerprint INTO v_known FROM wallet_operations o
    WHERE o.client_id = p_client_id AND o.source_transaction_id = p_reference;
    IF FOUND THEN
      IF v_known.kind <> 'REVERSAL' OR v_known.request_fingerprint IS DISTINCT FROM p_fingerprint THEN
        outcome := 'REFERENCE_REUSED';
      ELSE
        outcome := 'REPLAY';
        SELECT rec.records INTO records FROM wallet_operation_rows(p_client_id, ARRAY[v_known.id]) rec;
      END IF;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;

  SELECT o.id, o.kind, o.entry_id INTO v_target
  FROM wallet_transactions t JOIN wallet_operations o ON o.client_id = t.client_id AND o.id = t.operation_id
  WHERE t.client_id = p_client_id AND t.id = p_transaction_id;
  IF v_target.id IS NULL THEN
    outcome := 'NOT_FOUND';
  ELSIF v_target.kind = 'REVERSAL' THEN
    outcome := 'REVERSAL_OF_REVERSAL';
  END IF;
  IF outcome IS NOT NULL THEN
    RETURN NEXT;
    RETURN;
  END IF;

  -- Concurrent reversals of one operation queue here; the one that waited then finds the committed reversal
  -- (and answers it as a replay when it was the same request), instead of failing on a balance already spent.
  PERFORM 1 FROM wallet_operations o WHERE o.client_id = p_client_id AND o.id = v_target.id FOR UPDATE;
  SELECT o.id, o.source_transaction_id, o.request_fingerprint INTO v_known FROM wallet_operations o
  WHERE o.client_id = p_client_id AND o.reverses_operation_id = v_target.id;
  IF FOUND THEN
    IF p_reference IS NOT NULL AND v_known.source_transaction_id = p_reference
       AND v_known.request_fingerprint = p_fingerprint THEN
      outcome := 'REPLAY';
      SELECT rec.records INTO records FROM wallet_operation_rows(p_client_id, ARRAY[v_known.id]) rec;
    ELSE
      outcome := 'ALREADY_REVERSED';
    END IF;
    RETURN NEXT;
    RETURN;
  END IF;

  SELECT min(r.entry_id), array_agg(r.account_id), array_agg(r.amount), array_agg(r.balance_after)
  INTO v_entry, v_accounts, v_amounts, v_afters
  FROM ledger_reverse_entry(p_client_id, v_target.entry_id, 'WALLET_REVERSAL') r;
  SELECT a.account_number INTO v_closed
  FROM wallets w JOIN ledger_accounts a ON a.client_id = w.client_id AND a.id = w.id
  WHERE w.client_id = p_client_id AND w.id = ANY (v_accounts) AND w.status = 'CLOSED'
  LIMIT 1;
  IF v_closed IS NOT NULL THEN
    RAISE EXCEPTION 'wallet % is CLOSED', v_closed USING ERRCODE = 'WC001', DETAIL = v_closed;
  END IF;

  INSERT INTO wallet_operations (client_id, kind, source_transaction_id, request_fingerprint, entry_id, reverses_operation_id)
  VALUES (p_client_id, 'REVERSAL', p_reference, p_fingerprint, v_entry, v_target.id)
  RETURNING wallet_operations.id INTO v_operation;

  -- One record per original record, direction flipped, balances as the reversing entry moved them; a
  -- single-wallet original had the settlement account as its other side, which gets a record of its own.
  -- Read first, then written: on Citus a function writing shards may not run inside a query on a shard.
  SELECT array_agg(r.id), array_agg(r.account_id), array_agg(r.type), array_agg(r.source), array_agg(r.currency),
         array_agg(r.amount), array_agg(r.fee), array_agg(r.previous_balance), array_agg(r.current_balance),
         array_agg(r.other_party_account), array_agg(r.other_leg), array_agg(r.data), array_agg(r.narration),
         array_agg(r.original_currency), array_agg(r.original_amount), array_agg(r.exchange_rate)
    INTO r_ids, r_accounts, r_types, r_sources, r_currencies, r_amounts, r_fees,
         r_previous_balances, r_current_balances, r_other_parties, r_other_legs, r_data,
         r_narrations, r_original_currencies, r_original_amounts, r_rates
  FROM (
    WITH originals AS (
      SELECT t.*, a.account_number AS own_account_number,
             CASE t.transaction_type WHEN 'CREDIT' THEN 'DEBIT' ELSE 'CREDIT' END AS flipped_type,
             row_number() OVER (ORDER BY t.transaction_type = 'CREDIT', t.id) AS n,
             count(*) OVER () AS legs
      FROM wallet_transactions t JOIN ledger_accounts a ON a.client_id = t.client_id AND a.id = t.account_id
      WHERE t.client_id = p_client_id AND t.operation_id = v_target.id
    ), moved AS (
      SELECT * FROM unnest(v_accounts, v_amounts, v_afters) AS m (account_id, amount, balance_after)
    )
    SELECT v_leg_ids[o.n::int] AS id, o.account_id, o.flipped_type::text AS type,
           'INTERNAL_REVERAL_' || o.flipped_type AS source, o.currency::text AS currency, o.transaction_amount AS amount,
           o.transaction_fee AS fee, p.balance_after - p.amount AS previous_balance, p.balance_after AS current_balance,
           o.other_party_account::text AS other_party_account,
           CASE WHEN o.legs > 1 THEN v_leg_ids[3 - o.n::int] ELSE v_other_leg END::text AS other_leg,
           jsonb_build_object('reversed_transaction_id', o.id) AS data, coalesce(p_narration, 'Reversal of ' || o.id) AS narration,
           o.original_currency::text AS original_currency, o.original_amount, o.exchange_rate
    FROM originals o JOIN moved p ON p.account_id = o.account_id
    UNION ALL
    SELECT v_other_leg, s.id, o.transaction_type, 'INTERNAL_REVERAL_' || o.transaction_type, s.currency, abs(p.amount), 0,
           p.balance_after - p.amount, p.balance_after, o.own_account_number, v_leg_ids[1]::text,
           jsonb_build_object('reversed_transaction_id', o.id), coalesce(p_narration, 'Reversal of ' || o.id), NULL, NULL,
           NULL
    FROM originals o
    JOIN ledger_accounts s ON s.client_id = p_client_id AND s.account_number = o.other_party_account
    JOIN moved p ON p.account_id = s.id
    WHERE o.legs = 1
  ) r;
  PERFORM wallet_record_transactions(p_ids => r_ids,
    p_operation_ids => array_fill(v_operation, ARRAY[cardinality(r_ids)]),
    p_client_ids => array_fill(p_client_id, ARRAY[cardinality(r_ids)]), p_account_ids => r_accounts,
    p_types => r_types, p_sources => r_sources, p_currencies => r_currencies, p_amounts => r_amounts,
    p_fees => r_fees, p_previous_balances => r_previous_balances, p_current_balances => r_current_balances,
    p_other_party_accounts => r_other_parties, p_other_party_transaction_hashes => r_other_legs,
    p_source_transaction_ids => array_fill(p_reference, ARRAY[cardinality(r_ids)]),
    p_source_transaction_data => r_data, p_narrations => r_narrations,
    p_transaction_dates => array_fill(now(), ARRAY[cardinality(r_ids)]),
    p_original_currencies => r_original_currencies, p_original_amounts => r_original_amounts,
    p_exchange_rates => r_rates);

  outcome := 'REVERSED';
  SELECT rec.records INTO records FROM wallet_operation_rows(p_client_id, ARRAY[v_operation]) rec;
  RETURN NEXT;
END
$fn$;
