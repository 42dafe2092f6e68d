-- Group commit of airtime_accept: floats locked once per group in id order, requests in (client, reference) order.
CREATE OR REPLACE FUNCTION airtime_accept_batch(p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  service_code text,
  recipient_index integer,
  minimum_amount numeric,
  maximum_amount numeric
)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  a jsonb; n bigint;
BEGIN
  WITH floats AS (
    SELECT DISTINCT s.client_id, s.settlement_account_id AS id
    FROM jsonb_array_elements(p_items) e(a)
    JOIN client_services s ON s.client_id = (e.a->>0)::uuid AND s.code = coalesce(e.a->>2, (
      SELECT d.code FROM client_services d WHERE d.client_id = (e.a->>0)::uuid AND d.is_default_airtime
      ORDER BY d.created_at LIMIT 1))
    WHERE s.settlement_account_id IS NOT NULL
  )
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT f.id FROM floats f
    UNION
    SELECT i.id FROM floats f JOIN ledger_accounts fa ON fa.id = f.id
    JOIN ledger_accounts i ON i.client_id = f.client_id AND i.kind = 'IN_FLIGHT_AIRTIME' AND i.currency = fa.currency
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  FOR a, n IN
    SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n) ORDER BY e.a->>0, e.a->>1, e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM airtime_accept(
      (a->>0)::uuid, a->>1, a->>2,
      ARRAY(SELECT t.v FROM jsonb_array_elements_text(a->3) WITH ORDINALITY t(v, i) ORDER BY t.i),
      ARRAY(SELECT t.v::numeric FROM jsonb_array_elements_text(a->4) WITH ORDINALITY t(v, i) ORDER BY t.i),
      a->>5, a->>6, (a->>7)::int, (a->>8)::timestamptz, ARRAY(SELECT jsonb_array_elements_text(a->9))) r;
  END LOOP;
END
$fn$;
