-- Group commit of collection_initiate_checkout: one call per group, items in (client, reference) order.
CREATE OR REPLACE FUNCTION collection_initiate_checkouts(p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  problem text,
  details text[],
  merchant_transaction_id text,
  checkout_reference text,
  currency text,
  amount numeric,
  expires_at timestamp with time zone
)
LANGUAGE plpgsql
AS $fn$
DECLARE
  a jsonb; n bigint;
BEGIN
  FOR a, n IN
    SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n)
    ORDER BY e.a->>0, e.a->4->>'merchant_transaction_id', e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM collection_initiate_checkout(
      (a->>0)::uuid, a->>1, a->>2, a->>3, a->4, nullif(a->5, 'null'), a->>6) r;
  END LOOP;
END
$fn$;
