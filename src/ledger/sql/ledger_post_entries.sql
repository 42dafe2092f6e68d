-- Posts a batch of balanced entries: locks each account once in id order, applies every line, refuses an entry that
-- would take an account below its floor (refused_account), and answers the lines with their balances. Each entry is a
-- ledger_entry_to_post (client, kind, its lines as ledger_line: account and signed amount); entry_no is its place in
-- p_entries. Each posting takes the next of its account's numbers (account_seq, from posting_count) under the lock:
-- the order postings were applied to the account, whichever node writes them (ids are not, on Citus).
CREATE OR REPLACE FUNCTION ledger_post_entries(p_entries ledger_entry_to_post[])
RETURNS TABLE(
  entry_no integer,
  entry_id bigint,
  account_id uuid,
  amount numeric,
  balance_before numeric,
  balance_after numeric,
  refused_account text
)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
  v_ids uuid[]; v_owners uuid[]; v_numbers text[]; v_currencies text[]; v_balances numeric[];
  v_counts bigint[]; v_start_counts bigint[]; v_floors numeric[]; v_overdraw boolean[];
  i_clients uuid[]; i_kinds text[]; i_line_entry int[]; i_line_account uuid[]; i_line_amount numeric[];
  v_pos int[] := '{}';
  v_lines int;
  v_entries int := coalesce(cardinality(p_entries), 0);
  v_e_ids bigint[] := '{}'; v_e_clients uuid[] := '{}'; v_e_kinds text[] := '{}';
  v_p_entry bigint[] := '{}'; v_p_client uuid[] := '{}'; v_p_account uuid[] := '{}'; v_p_currency text[] := '{}'; v_p_amount numeric[] := '{}';
  v_p_after numeric[] := '{}'; v_p_seq bigint[] := '{}';
  o_no int[] := '{}'; o_entry bigint[] := '{}'; o_account uuid[] := '{}'; o_amount numeric[] := '{}';
  o_before numeric[] := '{}'; o_after numeric[] := '{}'; o_refused text[] := '{}';
  e int; l int := 1; k int; v_first int; p int; v_refused text; v_entry bigint; v_client uuid; v_clients uuid[];
BEGIN
  IF v_entries = 0 THEN RETURN; END IF;
  -- The records as the flat arrays the loops below walk: entries in order, each entry's lines together.
  SELECT array_agg(e.client_id ORDER BY e.n), array_agg(e.kind ORDER BY e.n) INTO i_clients, i_kinds
    FROM unnest(p_entries) WITH ORDINALITY e(client_id, kind, lines, n);
  SELECT array_agg(e.n::int ORDER BY e.n, l.k), array_agg(l.account_id ORDER BY e.n, l.k), array_agg(l.amount ORDER BY e.n, l.k)
    INTO i_line_entry, i_line_account, i_line_amount
    FROM unnest(p_entries) WITH ORDINALITY e(client_id, kind, lines, n), unnest(e.lines) WITH ORDINALITY l(account_id, amount, k);
  v_lines := coalesce(cardinality(i_line_entry), 0);
  IF v_lines = 0
     OR EXISTS (SELECT 1 FROM unnest(i_line_entry, i_line_account, i_line_amount) x(e, a, amt) GROUP BY x.e
                HAVING count(*) < 2 OR count(DISTINCT x.a) <> count(*) OR bool_or(x.amt = 0 OR x.amt <> round(x.amt, 4)))
     OR (SELECT count(DISTINCT x) FROM unnest(i_line_entry) x) <> v_entries THEN
    RAISE EXCEPTION 'every entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
  END IF;

  -- One lock per account for the whole batch, always in (client, id) order: batches and single entries cannot
  -- deadlock. Each client's accounts are looked at by their client: on Citus a statement names its shard.
  v_clients := ARRAY(SELECT DISTINCT c FROM unnest(i_clients) c ORDER BY c);
  FOREACH v_client IN ARRAY v_clients LOOP
    SELECT coalesce(v_ids, '{}') || array_agg(a.id ORDER BY a.id), coalesce(v_owners, '{}') || array_agg(a.client_id ORDER BY a.id),
           coalesce(v_numbers, '{}') || array_agg(a.account_number::text ORDER BY a.id),
           coalesce(v_currencies, '{}') || array_agg(a.currency::text ORDER BY a.id),
           coalesce(v_balances, '{}') || array_agg(a.balance ORDER BY a.id),
           coalesce(v_counts, '{}') || array_agg(a.posting_count ORDER BY a.id),
           coalesce(v_floors, '{}') || array_agg(a.minimum_balance ORDER BY a.id),
           coalesce(v_overdraw, '{}') || array_agg(a.can_overdraw ORDER BY a.id)
      INTO v_ids, v_owners, v_numbers, v_currencies, v_balances, v_counts, v_floors, v_overdraw
      FROM (SELECT * FROM ledger_accounts WHERE client_id = v_client AND id = ANY (i_line_account) ORDER BY id FOR NO KEY UPDATE) a;
  END LOOP;
  v_start_counts := v_counts;
  FOR k IN 1 .. v_lines LOOP
    p := array_position(v_ids, i_line_account[k]);
    IF p IS NULL OR v_owners[p] <> i_clients[i_line_entry[k]] THEN
      RAISE EXCEPTION 'entry names an unknown account or one of another client' USING ERRCODE = 'LA001';
    END IF;
    v_pos := v_pos || p;
  END LOOP;
  IF EXISTS (SELECT 1 FROM unnest(i_line_entry, v_pos, i_line_amount) x(e, p, amt)
             GROUP BY x.e, v_currencies[x.p] HAVING sum(x.amt) <> 0) THEN
    RAISE EXCEPTION 'an entry does not balance per currency' USING ERRCODE = 'LB001';
  END IF;

  FOR e IN 1 .. v_entries LOOP
    v_first := l;
    WHILE l <= v_lines AND i_line_entry[l] = e LOOP l := l + 1; END LOOP;
    -- An account appears once per entry, so checking each debit line is checking the entry's end state.
    v_refused := NULL;
    FOR k IN v_first .. l - 1 LOOP
      p := v_pos[k];
      IF i_line_amount[k] < 0 AND NOT v_overdraw[p] AND v_balances[p] + i_line_amount[k] < v_floors[p] THEN
        v_refused := v_numbers[p];
        EXIT;
      END IF;
    END LOOP;
    IF v_refused IS NOT NULL THEN
      o_no := o_no || e; o_entry := o_entry || NULL::bigint; o_account := o_account || NULL::uuid;
      o_amount := o_amount || NULL::numeric; o_before := o_before || NULL::numeric; o_after := o_after || NULL::numeric;
      o_refused := o_refused || v_refused;
      CONTINUE;
    END IF;
    v_entry := nextval('journal_entries_id_seq');
    v_e_ids := v_e_ids || v_entry; v_e_clients := v_e_clients || i_clients[e]; v_e_kinds := v_e_kinds || i_kinds[e];
    FOR k IN v_first .. l - 1 LOOP
      p := v_pos[k];
      o_before := o_before || v_balances[p];
      v_balances[p] := v_balances[p] + i_line_amount[k];
      v_counts[p] := v_counts[p] + 1;
      v_p_entry := v_p_entry || v_entry; v_p_client := v_p_client || i_clients[e]; v_p_account := v_p_account || v_ids[p]; v_p_currency := v_p_currency || v_currencies[p];
      v_p_amount := v_p_amount || i_line_amount[k]; v_p_after := v_p_after || v_balances[p]; v_p_seq := v_p_seq || v_counts[p];
      o_no := o_no || e; o_entry := o_entry || v_entry; o_account := o_account || v_ids[p]; o_amount := o_amount || i_line_amount[k];
      o_after := o_after || v_balances[p]; o_refused := o_refused || NULL::text;
    END LOOP;
  END LOOP;

  INSERT INTO journal_entries (id, client_id, kind) SELECT * FROM unnest(v_e_ids, v_e_clients, v_e_kinds);
  INSERT INTO postings (entry_id, client_id, account_id, currency, amount, balance_after, account_seq)
    SELECT x.e, x.cl, x.a, x.c, x.amt, x.after, x.seq
      FROM unnest(v_p_entry, v_p_client, v_p_account, v_p_currency, v_p_amount, v_p_after, v_p_seq)
      WITH ORDINALITY x(e, cl, a, c, amt, after, seq, n) ORDER BY x.n;
  -- Each account's row once per batch, however many entries moved it (its balance and its count of postings),
  -- client by client; floats' low-balance alerts follow the balances, under these locks
  -- (src/float/sql/float_low_balance_follow.sql).
  FOREACH v_client IN ARRAY v_clients LOOP
    UPDATE ledger_accounts a SET balance = x.bal, posting_count = x.count
      FROM unnest(v_ids, v_owners, v_balances, v_counts, v_start_counts) x(id, owner, bal, count, start_count)
      WHERE a.client_id = v_client AND x.owner = v_client AND a.id = x.id AND x.count <> x.start_count;
    PERFORM float_low_balance_follow(v_client, v_owners, v_ids, v_balances);
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(o_no, o_entry, o_account, o_amount, o_before, o_after, o_refused);
END
$fn$;
