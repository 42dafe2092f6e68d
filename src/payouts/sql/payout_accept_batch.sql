-- Group commit of payout_accept: floats and in-flight accounts locked once per group in id order, payouts in (client,
-- reference) order.
CREATE OR REPLACE FUNCTION payout_accept_batch(p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  fee numeric,
  float_currency text,
  minimum_amount numeric,
  maximum_amount numeric
)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  a jsonb; n bigint;
BEGIN
  -- The floats of the named services and the in-flight accounts of their rails and currencies. One not created
  -- yet is created by the first reservation that needs it (so a refused payout leaves no account behind).
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT s.settlement_account_id AS id
    FROM jsonb_array_elements(p_items) e(a) JOIN client_services s ON s.client_id = (e.a->>0)::uuid AND s.code = e.a->>1
    WHERE s.settlement_account_id IS NOT NULL
    UNION
    SELECT i.id
    FROM jsonb_array_elements(p_items) e(a)
    JOIN ledger_accounts i ON i.client_id = (e.a->>0)::uuid AND i.kind = e.a->>13 AND i.currency = e.a->>5 AND i.kind <> 'WALLET'
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  FOR a, n IN
    SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n) ORDER BY e.a->>0, e.a->>3, e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM payout_accept(
      (a->>0)::uuid, a->>1, a->>2, a->>3, (a->>4)::numeric, a->>5, a->>6, a->>7, a->>8, a->>9, a->>10, a->11, a->>12,
      a->>13, a->>14, (a->>15)::timestamptz, ARRAY(SELECT jsonb_array_elements_text(a->16))) r;
  END LOOP;
END
$fn$;
