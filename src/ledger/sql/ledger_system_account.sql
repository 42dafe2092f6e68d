-- A client's system account of a kind and currency (in-flight, fee income, FX position, ...), created on first use:
-- the one creator of system accounts.
CREATE OR REPLACE FUNCTION ledger_system_account(p_client_id uuid, p_kind text, p_currency text)
RETURNS uuid
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_id uuid;
BEGIN
  -- kind <> 'WALLET' lets the partial unique index serve the lookup.
  SELECT a.id INTO v_id FROM ledger_accounts a
  WHERE a.client_id = p_client_id AND a.kind = p_kind AND a.currency = p_currency AND a.kind <> 'WALLET';
  IF v_id IS NULL THEN
    INSERT INTO ledger_accounts (client_id, kind, currency, can_overdraw) VALUES (p_client_id, p_kind, p_currency, true)
    ON CONFLICT (client_id, kind, currency) WHERE kind <> 'WALLET' DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN -- created meanwhile by a transaction that has committed since
      SELECT a.id INTO v_id FROM ledger_accounts a
      WHERE a.client_id = p_client_id AND a.kind = p_kind AND a.currency = p_currency AND a.kind <> 'WALLET';
    END IF;
  END IF;
  RETURN v_id;
END
$fn$;
