-- Group commit of collection_accept_charge: one call per group, items in (client, reference) order.
CREATE OR REPLACE FUNCTION collection_accept_charges(p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  problem text,
  details text[],
  id bigint,
  service_amount numeric,
  transaction_charge numeric,
  total_amount numeric,
  payment_url text,
  next_step text
)
LANGUAGE plpgsql
AS $fn$
DECLARE
  a jsonb; n bigint;
BEGIN
  FOR a, n IN
    SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n)
    ORDER BY e.a->>0, e.a->4->>'external_reference', e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM collection_accept_charge(
      (a->>0)::uuid, a->>1, a->>2, a->>3, a->4, nullif(a->5, 'null'), a->>6, a->>7, (a->>8)::timestamptz) r;
  END LOOP;
END
$fn$;
