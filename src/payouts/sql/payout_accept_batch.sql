-- Accepts a group of one client's payouts (local, IMT, B2B) in one transaction, set-wise. p_items is a JSON array of
-- objects (amounts as JSON strings; PayoutsRepository.accept, src/payouts/payouts.repository.ts). Each item: the paying
-- service's checks, the reference, amount + fee reserved from its float (float_reserve: a FLOAT_RESERVE entry and a
-- hold per payout, every payout of a float in one call), the payout and its processing job. A refusal is a row: its
-- outcome, and in detail what its wording needs (PayoutAcceptance). Floats and in-flight accounts are locked once per
-- group in id order; payouts are taken in reference order.
CREATE OR REPLACE FUNCTION payout_accept_batch(p_client_id uuid, p_items jsonb)
RETURNS TABLE(item_no integer, outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  -- Every item, in reference order: its position, refusal (null while it may be accepted), detail, fee,
  -- and whether it is the one item of its reference to be tried.
  v_no       int[];
  v_refusal  text[];
  v_detail   jsonb[];
  v_fee      numeric[];
  v_float    uuid[];
  v_service  uuid[];
  v_tries    boolean[];
  v_amounts  numeric[];
  -- Each named service's paying_service answer, by code and paying states.
  v_services jsonb;
  -- Per tried item: its hold and the float's balance after its reservation (no hold: the float was short).
  v_tried    int[] := '{}';
  v_hold     bigint[] := '{}';
  v_after    numeric[] := '{}';
  v_again    int[];
  v_stored   int;
  f record;
BEGIN
  -- The floats of the named services and the in-flight accounts of their rails and currencies. One not created
  -- yet is created by the first reservation that needs it (so a refused payout leaves no account behind).
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT s.settlement_account_id AS id
    FROM jsonb_to_recordset(p_items) AS p(service_code text)
    JOIN client_services s ON s.client_id = p_client_id AND s.code = p.service_code
    WHERE s.settlement_account_id IS NOT NULL
    UNION
    SELECT a.id
    FROM jsonb_to_recordset(p_items) AS p(currency text, rail text)
    JOIN ledger_accounts a ON a.client_id = p_client_id AND a.kind = p.rail AND a.currency = p.currency AND a.kind <> 'WALLET'
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.client_id = p_client_id AND la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  -- The paying services, each once, before the statement that reads the payouts: on Citus a function reading shards
  -- may not run inside a query on a shard.
  SELECT jsonb_object_agg(c.code || ':' || array_to_string(c.paying_states, ','), to_jsonb(s)) INTO v_services
  FROM (SELECT DISTINCT q.service_code AS code, q.paying_states
        FROM jsonb_to_recordset(p_items) AS q(service_code text, paying_states text[])) c
  CROSS JOIN LATERAL paying_service(p_client_id => p_client_id, p_service_code => c.code, p_paying_states => c.paying_states) s;

  -- The checks, then the reference: taken before (read after the float's lock, so a group of the same float that
  -- took it has committed), or named by an earlier item of this group that passed the checks. Planned afresh at each
  -- call (EXECUTE): the payouts table grows from empty, and a plan cached while it was small scans it whole.
  EXECUTE $sql$
  WITH item AS MATERIALIZED (
    SELECT p.payout_reference, p.amount, p.ordinality, s.service_id, s.float_account_id,
           s.float_currency, a.outside_bounds,
           CASE
             WHEN s.refusal IS NOT NULL THEN s.refusal
             WHEN s.float_currency <> p.currency THEN 'CURRENCY'
             WHEN a.outside_bounds IS NOT NULL THEN 'AMOUNT_BOUNDS'
             WHEN taken.reference THEN 'DUPLICATE'
           END AS refused
    FROM ROWS FROM (jsonb_to_recordset($1) AS (
      service_code text, payout_reference text, amount numeric, currency text, paying_states text[]
    )) WITH ORDINALITY AS p
    CROSS JOIN LATERAL jsonb_to_record($3 -> (p.service_code || ':' || array_to_string(p.paying_states, ','))) AS s (
      refusal text, service_id uuid, float_account_id uuid, float_currency text, minimum_amount numeric, maximum_amount numeric
    )
    CROSS JOIN LATERAL (SELECT client_service_amount_bounds(p.amount, s.minimum_amount, s.maximum_amount))
      AS a (outside_bounds)
    -- An index probe per item: the planner takes a group for 100 items and hashes an EXISTS, reading every payout of
    -- the client on each call.
    LEFT JOIN LATERAL (SELECT true AS reference FROM payouts t
                       WHERE t.client_id = $2 AND t.payout_reference = p.payout_reference LIMIT 1) taken ON true
  ), checked AS (
    SELECT i.*,
           i.refused IS NULL AND i.ordinality = min(i.ordinality) FILTER (WHERE i.refused IS NULL)
             OVER (PARTITION BY i.payout_reference) AS tries
    FROM item i
  )
  SELECT array_agg(c.ordinality::int ORDER BY c.payout_reference, c.ordinality),
         array_agg(coalesce(c.refused, CASE WHEN NOT c.tries THEN 'DUPLICATE' END)
                   ORDER BY c.payout_reference, c.ordinality),
         array_agg(CASE c.refused
                     WHEN 'CURRENCY' THEN jsonb_build_object('float_currency', c.float_currency)
                     WHEN 'AMOUNT_BOUNDS' THEN c.outside_bounds
                   END ORDER BY c.payout_reference, c.ordinality),
         array_agg(c.amount ORDER BY c.payout_reference, c.ordinality),
         array_agg(c.float_account_id ORDER BY c.payout_reference, c.ordinality),
         array_agg(c.service_id ORDER BY c.payout_reference, c.ordinality),
         array_agg(c.tries ORDER BY c.payout_reference, c.ordinality)
  FROM checked c
  $sql$ INTO v_no, v_refusal, v_detail, v_amounts, v_float, v_service, v_tries USING p_items, p_client_id, v_services;
  SELECT array_agg(CASE WHEN x.tries THEN client_service_fee(p_client_id, x.service_id, x.amount) END ORDER BY x.n) INTO v_fee
  FROM unnest(v_tries, v_service, v_amounts) WITH ORDINALITY AS x (tries, service_id, amount, n);

  -- The reservations, one float_reserve call per float (in id order), a reservation per payout in the group's order.
  FOR f IN
    SELECT c.float_account_id, p.currency, p.rail, array_agg(c.no ORDER BY c.pos) AS items,
           array_agg(p.amount ORDER BY c.pos) AS amounts, array_agg(c.fee ORDER BY c.pos) AS fees
    FROM unnest(v_no, v_tries, v_fee, v_float) WITH ORDINALITY AS c (no, tries, fee, float_account_id, pos)
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (currency text, rail text, amount numeric))
      WITH ORDINALITY AS p ON p.ordinality = c.no
    WHERE c.tries
    GROUP BY c.float_account_id, p.currency, p.rail
    ORDER BY c.float_account_id, p.rail
  LOOP
    SELECT v_tried || f.items, v_hold || array_agg(r.hold_ids[1] ORDER BY r.reservation_no),
           v_after || array_agg(r.float_balance_after ORDER BY r.reservation_no)
      INTO v_tried, v_hold, v_after
    FROM float_reserve(p_client_id => p_client_id, p_float_account_id => f.float_account_id, p_currency => f.currency,
                       p_rail => f.rail, p_reservations => (SELECT array_agg(n) FROM generate_series(1, cardinality(f.items)) n),
                       p_amounts => f.amounts, p_fees => f.fees) r;
  END LOOP;

  -- The payouts held, written once with their holds, in reference order, each with its processing job.
  WITH stored AS (
    INSERT INTO payouts (client_id, kind, payout_reference, client_service_id, float_account_id, hold_id, amount, fee,
      currency, recipient_amount, recipient_currency, destination_type, destination_name, recipient_account_number,
      recipient_phone_number, recipient_bank_code, request, callback_url, float_balance_after)
    SELECT p_client_id, p.kind, p.payout_reference, x.service_id, x.float_account_id, h.hold, p.amount, x.fee,
      p.currency, p.recipient_amount, p.recipient_currency, p.destination_type, p.destination_name,
      p.recipient_account_number, p.recipient_phone_number, p.recipient_bank_code, p.request, p.callback_url, h.after
    FROM unnest(v_no, v_fee, v_float, v_service) WITH ORDINALITY AS x (no, fee, float_account_id, service_id, pos)
    JOIN unnest(v_tried, v_hold, v_after) AS h (no, hold, after) ON h.no = x.no AND h.hold IS NOT NULL
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (
      kind text, payout_reference text, amount numeric, currency text, recipient_amount numeric,
      recipient_currency text, destination_type text, destination_name text, recipient_account_number text,
      recipient_phone_number text, recipient_bank_code text, request jsonb, callback_url text
    )) WITH ORDINALITY AS p ON p.ordinality = x.no
    ORDER BY x.pos
    -- Only a payout of another float, by a group that committed after this one's check, can be here.
    ON CONFLICT (client_id, payout_reference) DO NOTHING
    RETURNING id, client_id, payout_reference
  ), queued AS (
    INSERT INTO outbox (client_id, topic, payload, available_at)
    SELECT s.client_id, p.topic, jsonb_build_object('payoutId', s.id::text), p.process_at
    FROM stored s
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (payout_reference text, topic text, process_at timestamptz))
      WITH ORDINALITY AS p ON p.payout_reference = s.payout_reference
      AND p.ordinality = ANY (v_tried)
    ORDER BY s.id
  )
  SELECT count(*) INTO v_stored FROM stored;
  IF v_stored < (SELECT count(*) FROM unnest(v_hold) h WHERE h IS NOT NULL) THEN
    -- The reservation of that payout is undone with the whole call, which is tried again and then finds the reference.
    RAISE EXCEPTION 'a payout reference was taken by a concurrent group' USING ERRCODE = '40001';
  END IF;

  -- Items naming the reference of a payout its float was short of are tried again, as if they had come next.
  SELECT array_agg(x.no ORDER BY x.pos) INTO v_again
  FROM unnest(v_no, v_refusal, v_tries) WITH ORDINALITY AS x (no, refusal, tries, pos)
  JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (payout_reference text)) WITH ORDINALITY AS p
    ON p.ordinality = x.no
  WHERE x.refusal = 'DUPLICATE' AND NOT x.tries AND EXISTS (
    SELECT 1
    FROM unnest(v_tried, v_hold) AS h (no, hold)
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (payout_reference text)) WITH ORDINALITY AS q
      ON q.ordinality = h.no
    WHERE h.hold IS NULL AND q.payout_reference = p.payout_reference);

  RETURN QUERY
  SELECT x.no, coalesce(x.refusal, CASE WHEN h.hold IS NULL THEN 'INSUFFICIENT_FLOAT' ELSE 'ACCEPTED' END),
         CASE WHEN x.refusal IS NULL AND h.hold IS NULL THEN jsonb_build_object('fee', x.fee::text) ELSE x.detail END
  FROM unnest(v_no, v_refusal, v_detail, v_fee) WITH ORDINALITY AS x (no, refusal, detail, fee, pos)
  LEFT JOIN unnest(v_tried, v_hold) AS h (no, hold) ON h.no = x.no
  WHERE x.no <> ALL (coalesce(v_again, '{}'))
  ORDER BY x.pos;
  IF v_again IS NOT NULL THEN
    RETURN QUERY
    SELECT v_again[r.item_no], r.outcome, r.detail
    FROM payout_accept_batch(p_client_id, (SELECT jsonb_agg(p_items -> (a.n - 1) ORDER BY a.k)
                              FROM unnest(v_again) WITH ORDINALITY AS a (n, k))) r;
  END IF;
END
$fn$;
