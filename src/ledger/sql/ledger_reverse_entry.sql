-- Posts the exact negation of an entry: the only way anything is undone.
CREATE OR REPLACE FUNCTION ledger_reverse_entry(p_client_id uuid, p_entry_id bigint, p_kind text)
RETURNS TABLE(entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  v_amounts  numeric[];
BEGIN
  SELECT array_agg(p.account_id ORDER BY p.id), array_agg(-p.amount ORDER BY p.id) INTO v_accounts, v_amounts
  FROM postings p JOIN journal_entries e ON e.client_id = p.client_id AND e.id = p.entry_id
  WHERE p.client_id = p_client_id AND p.entry_id = p_entry_id;
  IF v_accounts IS NULL THEN
    RAISE EXCEPTION 'no entry % of this client', p_entry_id USING ERRCODE = 'LE001';
  END IF;
  RETURN QUERY SELECT * FROM ledger_post_entry(p_client_id, p_kind, v_accounts, v_amounts);
END
$fn$;
