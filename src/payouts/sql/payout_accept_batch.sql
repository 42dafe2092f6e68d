-- Accepts a group of payouts (local, IMT, B2B) in one transaction, set-wise. p_items is a JSON array of objects
-- (amounts as JSON strings; PayoutsRepository.accept, src/payouts/payouts.repository.ts). Each item: the paying
-- service's checks, the idempotency claim, amount + fee reserved from its float (float_reserve: a FLOAT_RESERVE entry
-- and a hold per payout, every payout of a float in one call), and its processing job. A refusal is a row: its
-- outcome, and in detail what its wording needs (PayoutAcceptance). Floats and in-flight accounts are locked once per
-- group in id order, payouts claimed in (client, reference) order.
CREATE OR REPLACE FUNCTION payout_accept_batch(p_items jsonb)
RETURNS TABLE(item_no integer, outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  -- Every item, in claiming order: its position, refusal (null while accepted), detail, fee and claimed payout.
  v_no       int[];
  v_refusal  text[];
  v_detail   jsonb[];
  v_fee      numeric[];
  v_float    uuid[];
  v_payout   bigint[];
  v_claims   boolean[];
  -- Per claimed payout: its hold and the float's balance after its reservation (null hold: the float was short).
  v_held     bigint[] := '{}';
  v_hold     bigint[] := '{}';
  v_after    numeric[] := '{}';
  v_again    int[];
  f record;
BEGIN
  -- The floats of the named services and the in-flight accounts of their rails and currencies. One not created
  -- yet is created by the first reservation that needs it (so a refused payout leaves no account behind).
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT s.settlement_account_id AS id
    FROM jsonb_to_recordset(p_items) AS p(client_id uuid, service_code text)
    JOIN client_services s ON s.client_id = p.client_id AND s.code = p.service_code
    WHERE s.settlement_account_id IS NOT NULL
    UNION
    SELECT a.id
    FROM jsonb_to_recordset(p_items) AS p(client_id uuid, currency text, rail text)
    JOIN ledger_accounts a ON a.client_id = p.client_id AND a.kind = p.rail AND a.currency = p.currency AND a.kind <> 'WALLET'
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  -- The checks and the claim. Of the items naming one reference, only the first that passes the checks claims it;
  -- the others, like a reference taken before, are duplicates. A concurrent claim of the reference waits on the
  -- unique key, then answers DUPLICATE without touching the float.
  WITH item AS (
    SELECT p.*, s.refusal, s.service_id, s.float_account_id, s.float_currency, s.minimum_amount, s.maximum_amount,
           CASE
             WHEN s.refusal IS NOT NULL THEN s.refusal
             WHEN s.float_currency <> p.currency THEN 'CURRENCY'
             WHEN p.amount NOT BETWEEN s.minimum_amount AND s.maximum_amount THEN 'AMOUNT_OUT_OF_BOUNDS'
           END AS refused
    FROM ROWS FROM (jsonb_to_recordset(p_items) AS (
      client_id uuid, service_code text, kind text, payout_reference text, amount numeric, currency text,
      recipient_amount numeric, recipient_currency text, destination_type text, destination_name text,
      recipient_account_number text, recipient_phone_number text, recipient_bank_code text, request jsonb,
      callback_url text, paying_states text[]
    )) WITH ORDINALITY AS p
    CROSS JOIN LATERAL paying_service(p_client_id => p.client_id, p_service_code => p.service_code,
                                      p_paying_states => p.paying_states) s
  ), checked AS (
    SELECT i.*,
           CASE WHEN i.refused IS NULL THEN client_service_fee(i.service_id, i.amount) END AS fee,
           i.refused IS NULL AND i.ordinality = min(i.ordinality) FILTER (WHERE i.refused IS NULL)
             OVER (PARTITION BY i.client_id, i.payout_reference) AS claims
    FROM item i
  ), claim AS (
    INSERT INTO payouts (client_id, kind, payout_reference, client_service_id, float_account_id, amount, fee, currency,
      recipient_amount, recipient_currency, destination_type, destination_name, recipient_account_number,
      recipient_phone_number, recipient_bank_code, request, callback_url)
    SELECT c.client_id, c.kind, c.payout_reference, c.service_id, c.float_account_id, c.amount, c.fee, c.currency,
      c.recipient_amount, c.recipient_currency, c.destination_type, c.destination_name, c.recipient_account_number,
      c.recipient_phone_number, c.recipient_bank_code, c.request, c.callback_url
    FROM checked c
    WHERE c.claims
    ORDER BY c.client_id::text, c.payout_reference
    ON CONFLICT (client_id, payout_reference) DO NOTHING
    RETURNING id, client_id, payout_reference
  )
  SELECT array_agg(c.ordinality::int ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(coalesce(c.refused, CASE WHEN cl.id IS NULL THEN 'DUPLICATE' END)
                   ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(CASE c.refused
                     WHEN 'CURRENCY' THEN jsonb_build_object('float_currency', c.float_currency)
                     WHEN 'AMOUNT_OUT_OF_BOUNDS' THEN jsonb_build_object('minimum_amount', c.minimum_amount::text,
                                                                         'maximum_amount', c.maximum_amount::text)
                   END ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(c.fee ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(c.float_account_id ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(cl.id ORDER BY c.client_id::text, c.payout_reference, c.ordinality),
         array_agg(c.claims ORDER BY c.client_id::text, c.payout_reference, c.ordinality)
    INTO v_no, v_refusal, v_detail, v_fee, v_float, v_payout, v_claims
  FROM checked c
  LEFT JOIN claim cl ON c.claims AND cl.client_id = c.client_id AND cl.payout_reference = c.payout_reference;

  -- The reservations, one float_reserve call per float (in id order), a reservation per payout in claiming order.
  FOR f IN
    SELECT c.float_account_id, p.client_id, p.currency, p.rail,
           array_agg(c.payout ORDER BY c.pos) AS payouts, array_agg(p.amount ORDER BY c.pos) AS amounts,
           array_agg(c.fee ORDER BY c.pos) AS fees
    FROM unnest(v_no, v_payout, v_fee, v_float) WITH ORDINALITY AS c (no, payout, fee, float_account_id, pos)
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (client_id uuid, currency text, rail text, amount numeric))
      WITH ORDINALITY AS p ON p.ordinality = c.no
    WHERE c.payout IS NOT NULL
    GROUP BY c.float_account_id, p.client_id, p.currency, p.rail
    ORDER BY c.float_account_id, p.rail
  LOOP
    SELECT v_held || f.payouts, v_hold || array_agg(r.hold_ids[1] ORDER BY r.reservation_no),
           v_after || array_agg(r.float_balance_after ORDER BY r.reservation_no)
      INTO v_held, v_hold, v_after
    FROM float_reserve(p_client_id => f.client_id, p_float_account_id => f.float_account_id, p_currency => f.currency,
                       p_rail => f.rail, p_reservations => (SELECT array_agg(n) FROM generate_series(1, cardinality(f.payouts)) n),
                       p_amounts => f.amounts, p_fees => f.fees) r;
  END LOOP;

  UPDATE payouts p SET hold_id = x.hold, float_balance_after = x.after
  FROM unnest(v_held, v_hold, v_after) AS x (payout, hold, after)
  WHERE p.id = x.payout AND x.hold IS NOT NULL;
  -- A payout its float was short of gives its claim up, so the reference stays free.
  DELETE FROM payouts p USING unnest(v_held, v_hold) AS x (payout, hold) WHERE p.id = x.payout AND x.hold IS NULL;
  INSERT INTO outbox (topic, payload, available_at)
  SELECT p.topic, jsonb_build_object('payoutId', x.payout::text), p.process_at
  FROM unnest(v_payout, v_no) WITH ORDINALITY AS x (payout, no, pos)
  JOIN unnest(v_held, v_hold) AS h (payout, hold) ON h.payout = x.payout AND h.hold IS NOT NULL
  JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (topic text, process_at timestamptz)) WITH ORDINALITY AS p
    ON p.ordinality = x.no
  ORDER BY x.pos;

  -- Items naming the reference of a payout its float was short of are tried again, as if they had come next.
  SELECT array_agg(x.no ORDER BY x.pos) INTO v_again
  FROM unnest(v_no, v_refusal, v_claims) WITH ORDINALITY AS x (no, refusal, claims, pos)
  JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (client_id uuid, payout_reference text)) WITH ORDINALITY AS p
    ON p.ordinality = x.no
  WHERE x.refusal = 'DUPLICATE' AND NOT x.claims AND EXISTS (
    SELECT 1
    FROM unnest(v_no, v_payout) AS c (no, payout)
    JOIN unnest(v_held, v_hold) AS h (payout, hold) ON h.payout = c.payout AND h.hold IS NULL
    JOIN ROWS FROM (jsonb_to_recordset(p_items) AS (client_id uuid, payout_reference text)) WITH ORDINALITY AS q
      ON q.ordinality = c.no
    WHERE q.client_id = p.client_id AND q.payout_reference = p.payout_reference);

  RETURN QUERY
  SELECT x.no, coalesce(x.refusal, CASE WHEN h.hold IS NULL THEN 'INSUFFICIENT_FLOAT' ELSE 'ACCEPTED' END),
         CASE WHEN x.refusal IS NULL AND h.hold IS NULL THEN jsonb_build_object('fee', x.fee::text) ELSE x.detail END
  FROM unnest(v_no, v_refusal, v_detail, v_fee, v_payout) WITH ORDINALITY AS x (no, refusal, detail, fee, payout, pos)
  LEFT JOIN unnest(v_held, v_hold) AS h (payout, hold) ON h.payout = x.payout
  WHERE x.no <> ALL (coalesce(v_again, '{}'))
  ORDER BY x.pos;
  IF v_again IS NOT NULL THEN
    RETURN QUERY
    SELECT v_again[r.item_no], r.outcome, r.detail
    FROM payout_accept_batch((SELECT jsonb_agg(p_items -> (n - 1) ORDER BY k) FROM unnest(v_again) WITH ORDINALITY AS a (n, k))) r;
  END IF;
END
$fn$;
