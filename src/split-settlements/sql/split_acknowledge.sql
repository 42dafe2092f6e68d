-- Acknowledges a payment's splits in one call: the payment under its lock, the distribution entry, wallet states
-- checked under the entry's locks. Answers the outcome and its values by name (detail, jsonb, or null).
CREATE OR REPLACE FUNCTION split_acknowledge(
  p_client_id uuid,
  p_payment_id bigint,
  p_distribute boolean,
  p_paying_states text[],
  p_receiving_states text[]
)
RETURNS TABLE(outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_payment  record;
  v_split    record;
  v_entry    bigint;
  v_refused  text;
  v_wallet   record;
BEGIN
  SELECT p.id, p.payment_status, p.split_settlements, p.acknowledged_at, s.settlement_account_id INTO v_payment
  FROM payments p JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id
  WHERE p.id = p_payment_id AND p.client_id = p_client_id FOR UPDATE OF p;
  IF v_payment.id IS NULL THEN
    RETURN QUERY SELECT 'NOT_FOUND', NULL::jsonb; RETURN;
  ELSIF v_payment.acknowledged_at IS NOT NULL THEN
    RETURN QUERY SELECT 'ACKNOWLEDGED_BEFORE', NULL::jsonb; RETURN;
  ELSIF v_payment.payment_status <> payment_status_code('SUCCESSFUL') THEN
    RETURN QUERY SELECT 'NOT_SUCCESSFUL', NULL::jsonb; RETURN;
  ELSIF v_payment.split_settlements IS NULL OR NOT p_distribute THEN
    UPDATE payments SET acknowledged_at = now(), split_status = CASE WHEN v_payment.split_settlements IS NULL THEN NULL ELSE 'DECLINED' END,
      split_entry_id = NULL, updated_at = now()
    WHERE client_id = p_client_id AND id = v_payment.id;
    RETURN QUERY SELECT CASE WHEN v_payment.split_settlements IS NULL THEN 'NO_SHARES' ELSE 'DECLINED' END, NULL::jsonb;
    RETURN;
  END IF;

  -- Each share moves its amount from the settlement wallet to its partner; lines on one account are merged,
  -- the settlement wallet's first.
  SELECT array_agg(l.account ORDER BY l.first) AS accounts, array_agg(ROW(l.account, l.amount)::ledger_line ORDER BY l.first) AS lines
    INTO v_split
  FROM (
    SELECT x.account, sum(x.amount) AS amount, min(x.ord) AS first
    FROM (
      SELECT v_payment.settlement_account_id AS account, -(e.share->>'amount')::numeric AS amount, 2 * e.n - 1 AS ord
      FROM jsonb_array_elements(v_payment.split_settlements) WITH ORDINALITY e(share, n)
      UNION ALL
      SELECT (e.share->>'accountId')::uuid, (e.share->>'amount')::numeric, 2 * e.n
      FROM jsonb_array_elements(v_payment.split_settlements) WITH ORDINALITY e(share, n)
    ) x
    GROUP BY x.account HAVING sum(x.amount) <> 0
  ) l;

  BEGIN
    SELECT min(r.entry_id), min(r.refused_account) INTO v_entry, v_refused
    FROM ledger_post_entries(ARRAY[ROW(p_client_id, 'PAYMENT_SPLIT', v_split.lines)::ledger_entry_to_post]) r;
    IF v_refused IS NOT NULL THEN
      RETURN QUERY SELECT 'INSUFFICIENT', jsonb_build_object('account_number', v_refused); RETURN;
    END IF;
    -- The entry holds the wallets' row locks: a state change waits for this call, so their states stand.
    SELECT a.account_number::text AS number, w.status::text AS status, p.is_active = 1 AS profile_active,
           CASE WHEN a.id = v_payment.settlement_account_id THEN 'PAY' ELSE 'RECEIVE' END AS role
      INTO v_wallet
    FROM unnest(v_split.accounts) WITH ORDINALITY u(id, n)
    JOIN ledger_accounts a ON a.client_id = p_client_id AND a.id = u.id
    JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
    JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id
    WHERE p.is_active <> 1
       OR NOT (w.status = ANY (CASE WHEN a.id = v_payment.settlement_account_id THEN p_paying_states ELSE p_receiving_states END))
    ORDER BY u.n LIMIT 1;
    IF v_wallet.number IS NOT NULL THEN
      RAISE EXCEPTION 'split wallet refused' USING ERRCODE = 'SA001';
    END IF;
  EXCEPTION WHEN SQLSTATE 'SA001' THEN
    RETURN QUERY SELECT CASE WHEN v_wallet.profile_active THEN 'WALLET_STATE' ELSE 'PROFILE_DEACTIVATED' END,
      jsonb_build_object('account_number', v_wallet.number, 'role', v_wallet.role)
      || CASE WHEN v_wallet.profile_active THEN jsonb_build_object('status', v_wallet.status) ELSE '{}' END;
    RETURN;
  END;

  UPDATE payments SET acknowledged_at = now(), split_status = 'DISTRIBUTED', split_entry_id = v_entry, updated_at = now()
  WHERE client_id = p_client_id AND id = v_payment.id;
  RETURN QUERY SELECT 'DISTRIBUTED', jsonb_build_object('partners', jsonb_array_length(v_payment.split_settlements));
END
$fn$;
