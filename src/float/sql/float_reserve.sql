-- Reserves on one float, any number of reservations in one call: p_reservations numbers each line's reservation
-- (1..k, a reservation's lines together and in order), and each reservation is one FLOAT_RESERVE entry of its lines'
-- amount + fee into the rail's in-flight account, with one hold per line (p_amounts[i] with p_fees[i]). A reservation
-- the float is short of moves nothing and is answered with null ids; the others go on. Every entry goes through one
-- ledger_post_entries call. Called by payout_accept_batch (one reservation per payout) and airtime_accept (one for a
-- request's recipients) only.
CREATE OR REPLACE FUNCTION float_reserve(
  p_client_id uuid,
  p_float_account_id uuid,
  p_currency text,
  p_rail text,
  p_reservations integer[],
  p_amounts numeric[],
  p_fees numeric[]
)
RETURNS TABLE(reservation_no integer, reservation_id bigint, hold_ids bigint[], float_balance_after numeric)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_in_flight    uuid;
  v_reservations int[];
  v_totals       numeric[];
  v_to_post      ledger_entry_to_post[];
  v_entries      bigint[];
  v_afters       numeric[];
BEGIN
  IF coalesce(cardinality(p_amounts), 0) = 0 OR cardinality(p_amounts) <> cardinality(p_fees)
     OR cardinality(p_amounts) <> cardinality(p_reservations) THEN
    RAISE EXCEPTION 'a reservation needs one fee per amount and at least one line';
  END IF;
  SELECT array_agg(t.r ORDER BY t.r), array_agg(t.total ORDER BY t.r) INTO v_reservations, v_totals
  FROM (SELECT l.r, sum(l.amount + l.fee) AS total FROM unnest(p_reservations, p_amounts, p_fees) l (r, amount, fee)
        GROUP BY l.r) t;
  -- A block of its own, so that when the float is short of every reservation nothing is left behind, not even the
  -- in-flight account created for them.
  BEGIN
    v_in_flight := ledger_system_account(p_client_id, p_rail, p_currency);
    SELECT array_agg(ROW(p_client_id, 'FLOAT_RESERVE', ARRAY[ROW(p_float_account_id, -t.total)::ledger_line,
                                                              ROW(v_in_flight, t.total)::ledger_line])::ledger_entry_to_post
                     ORDER BY t.r)
      INTO v_to_post
    FROM unnest(v_reservations, v_totals) AS t (r, total);
    -- A refused entry answers one row (no entry id), a posted one a row per line: the float's line has its balance.
    SELECT array_agg(e.entry_id ORDER BY e.entry_no), array_agg(e.balance_after ORDER BY e.entry_no)
      INTO v_entries, v_afters
    FROM ledger_post_entries(v_to_post) e
    WHERE e.refused_account IS NOT NULL OR e.account_id = p_float_account_id;
    IF NOT EXISTS (SELECT 1 FROM unnest(v_entries) x WHERE x IS NOT NULL) THEN
      RAISE EXCEPTION 'the float is short of every reservation' USING ERRCODE = 'LF001';
    END IF;
  EXCEPTION WHEN SQLSTATE 'LF001' THEN
    RETURN QUERY SELECT r, NULL::bigint, NULL::bigint[], NULL::numeric FROM unnest(v_reservations) r;
    RETURN;
  END;

  RETURN QUERY
  WITH reservation AS (
    INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
    SELECT p_client_id, p_float_account_id, p_rail, p_currency, x.entry_id
    FROM unnest(v_entries) WITH ORDINALITY AS x (entry_id, r)
    WHERE x.entry_id IS NOT NULL
    ORDER BY x.r
    RETURNING id, reserve_entry_id
  ), held AS (
    -- Ids are drawn in insertion order, which follows the lines.
    INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee)
    SELECT rs.id, p_client_id, p_float_account_id, l.amount, l.fee
    FROM unnest(p_reservations, p_amounts, p_fees) WITH ORDINALITY AS l (r, amount, fee, n)
    JOIN reservation rs ON rs.reserve_entry_id = v_entries[l.r]
    ORDER BY l.n
    RETURNING id, float_holds.reservation_id
  )
  SELECT x.r::int, rs.id, hh.ids, CASE WHEN x.entry_id IS NOT NULL THEN v_afters[x.r] END
  FROM unnest(v_entries) WITH ORDINALITY AS x (entry_id, r)
  LEFT JOIN reservation rs ON rs.reserve_entry_id = x.entry_id
  LEFT JOIN (SELECT h.reservation_id AS id, array_agg(h.id ORDER BY h.id) AS ids FROM held h GROUP BY h.reservation_id) hh
    ON hh.id = rs.id
  ORDER BY x.r;
END
$fn$;
