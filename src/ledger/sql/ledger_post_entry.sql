-- Posts one balanced entry: a batch of one for ledger_post_entries; a refused floor raises LF001 with the account in
-- DETAIL.
CREATE OR REPLACE FUNCTION ledger_post_entry(p_client_id uuid, p_kind text, p_accounts uuid[], p_amounts numeric[])
RETURNS TABLE(entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
LANGUAGE plpgsql
AS $fn$
DECLARE
  r record;
BEGIN
  IF cardinality(p_accounts) <> cardinality(p_amounts) THEN
    RAISE EXCEPTION 'entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
  END IF;
  FOR r IN SELECT * FROM ledger_post_entries(ARRAY[ROW(p_client_id, p_kind,
             (SELECT array_agg(ROW(x.account, x.amount)::ledger_line ORDER BY x.n)
              FROM unnest(p_accounts, p_amounts) WITH ORDINALITY x(account, amount, n)))::ledger_entry_to_post]) LOOP
    IF r.refused_account IS NOT NULL THEN
      RAISE EXCEPTION 'account % would go below its minimum balance', r.refused_account
        USING ERRCODE = 'LF001', DETAIL = r.refused_account;
    END IF;
    entry_id := r.entry_id; account_id := r.account_id; amount := r.amount;
    balance_before := r.balance_before; balance_after := r.balance_after;
    RETURN NEXT;
  END LOOP;
END
$fn$;
