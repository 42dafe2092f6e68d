-- Reserves amounts and fees on a float: one FLOAT_RESERVE entry through ledger_post_entry (which raises LF001 when the
-- float is short), one hold per line (p_amounts[i] with p_fees[i]). Called by payout_accept and airtime_accept only.
CREATE OR REPLACE FUNCTION float_reserve(
  p_client_id uuid,
  p_float_account_id uuid,
  p_currency text,
  p_rail text,
  p_amounts numeric[],
  p_fees numeric[]
)
RETURNS TABLE(reservation_id bigint, entry_id bigint, hold_ids bigint[], float_balance_after numeric)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_in_flight   uuid;
  v_total       numeric;
  v_entry_id    bigint;
  v_after       numeric;
  v_reservation bigint;
  v_holds       bigint[];
BEGIN
  IF coalesce(cardinality(p_amounts), 0) = 0 OR cardinality(p_amounts) <> cardinality(p_fees) THEN
    RAISE EXCEPTION 'a reservation needs one fee per amount and at least one line';
  END IF;
  v_in_flight := ledger_system_account(p_client_id, p_rail, p_currency);
  SELECT sum(l.amount + l.fee) INTO v_total FROM unnest(p_amounts, p_fees) AS l (amount, fee);
  SELECT e.entry_id, e.balance_after INTO v_entry_id, v_after
  FROM ledger_post_entry(p_client_id, 'FLOAT_RESERVE', ARRAY[p_float_account_id, v_in_flight], ARRAY[-v_total, v_total]) e
  WHERE e.account_id = p_float_account_id;
  INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
  VALUES (p_client_id, p_float_account_id, p_rail, p_currency, v_entry_id)
  RETURNING id INTO v_reservation;
  -- Ids are drawn in insertion order, which follows the lines.
  WITH held AS (
    INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee)
    SELECT v_reservation, p_client_id, p_float_account_id, l.amount, l.fee
    FROM unnest(p_amounts, p_fees) WITH ORDINALITY AS l (amount, fee, n)
    ORDER BY l.n
    RETURNING id
  )
  SELECT array_agg(held.id ORDER BY held.id) INTO v_holds FROM held;
  RETURN QUERY SELECT v_reservation, v_entry_id, v_holds, v_after;
END
$fn$;
