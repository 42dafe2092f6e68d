-- Gives holds their one outcome, any number in one call: SETTLE moves amount + fee from the rail's in-flight account
-- to SETTLEMENT (amount) and FEE_INCOME (fee), RELEASE moves it back to the float. Holds are locked in id order, every
-- entry goes through one ledger_post_entries call; a hold already resolved (or unknown) is left as it is
-- (resolved = false). The caller holds the business rows' locks (lock order: business row, hold, accounts). Each hold
-- comes with its client (p_client_ids), by whom its rows are read: on Citus a statement names its shard.
CREATE OR REPLACE FUNCTION float_holds_resolve(p_client_ids uuid[], p_hold_ids bigint[], p_outcomes text[])
RETURNS TABLE(hold_id bigint, resolved boolean, entry_id bigint, float_balance_after numeric)
LANGUAGE plpgsql
AS $fn$
DECLARE
  h record;
  v_holds bigint[] := '{}'; v_settles boolean[] := '{}'; v_floats uuid[] := '{}';
  v_to_post ledger_entry_to_post[] := '{}'; v_in_flight ledger_line;
  v_entry_ids bigint[]; v_afters numeric[];
  e int := 0; v_client uuid;
BEGIN
  IF cardinality(p_hold_ids) <> cardinality(p_outcomes) OR cardinality(p_hold_ids) <> cardinality(p_client_ids) OR EXISTS (SELECT 1 FROM unnest(p_outcomes) o WHERE o NOT IN ('SETTLE', 'RELEASE')) THEN
    RAISE EXCEPTION 'one client and one outcome, SETTLE or RELEASE, per hold';
  END IF;
  FOREACH v_client IN ARRAY ARRAY(SELECT DISTINCT c FROM unnest(p_client_ids) c ORDER BY c) LOOP
  FOR h IN
    SELECT fh.id, fh.client_id, fh.float_account_id, fh.amount, fh.fee, r.rail, r.currency, o.outcome
    FROM (SELECT x.id, min(x.outcome) AS outcome FROM unnest(p_client_ids, p_hold_ids, p_outcomes) x(client_id, id, outcome)
          WHERE x.client_id = v_client GROUP BY x.id) o
    JOIN float_holds fh ON fh.client_id = v_client AND fh.id = o.id
    JOIN float_reservations r ON r.client_id = fh.client_id AND r.id = fh.reservation_id
    WHERE fh.status = 'HELD'
    ORDER BY fh.id
    FOR UPDATE OF fh
  LOOP
    e := e + 1;
    v_holds := v_holds || h.id; v_settles := v_settles || (h.outcome = 'SETTLE'); v_floats := v_floats || h.float_account_id;
    v_in_flight := ROW(ledger_system_account(h.client_id, h.rail, h.currency), -(h.amount + h.fee));
    IF h.outcome = 'SETTLE' THEN
      v_to_post := v_to_post || ROW(h.client_id, 'FLOAT_SETTLE',
        ARRAY[v_in_flight, ROW(ledger_system_account(h.client_id, 'SETTLEMENT', h.currency), h.amount)::ledger_line]
          || CASE WHEN h.fee > 0 THEN ARRAY[ROW(ledger_system_account(h.client_id, 'FEE_INCOME', h.currency), h.fee)::ledger_line]
                  ELSE '{}'::ledger_line[] END)::ledger_entry_to_post;
    ELSE
      v_to_post := v_to_post || ROW(h.client_id, 'FLOAT_RELEASE',
        ARRAY[v_in_flight, ROW(h.float_account_id, h.amount + h.fee)::ledger_line])::ledger_entry_to_post;
    END IF;
  END LOOP;
  END LOOP;

  IF e > 0 THEN
    -- The float's balance after each entry (a release's); in-flight accounts overdraw, so nothing is refused.
    SELECT array_agg(p.entry_id ORDER BY p.entry_no), array_agg(p.after ORDER BY p.entry_no) INTO v_entry_ids, v_afters
    FROM (SELECT l.entry_no, min(l.entry_id) AS entry_id,
                 max(l.balance_after) FILTER (WHERE l.account_id = v_floats[l.entry_no] AND NOT v_settles[l.entry_no]) AS after
          FROM ledger_post_entries(v_to_post) l GROUP BY l.entry_no) p;
    FOREACH v_client IN ARRAY ARRAY(SELECT DISTINCT c FROM unnest(p_client_ids) c ORDER BY c) LOOP
      UPDATE float_holds fh SET status = CASE WHEN x.settle THEN 'SETTLED' ELSE 'RELEASED' END,
        outcome_entry_id = x.entry_id, resolved_at = now()
      FROM unnest(v_holds, v_settles, v_entry_ids) x(id, settle, entry_id) WHERE fh.client_id = v_client AND fh.id = x.id;
    END LOOP;
  END IF;

  RETURN QUERY
    SELECT x.id, r.id IS NOT NULL, r.entry_id, r.after
    FROM unnest(p_hold_ids) x(id)
    LEFT JOIN unnest(v_holds, v_entry_ids, v_afters) r(id, entry_id, after) ON r.id = x.id;
END
$fn$;
