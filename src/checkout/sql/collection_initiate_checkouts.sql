-- Group commit of collection_initiate_checkout for one client (p_client_id): one call per group, items in reference
-- order. p_items is an array of objects named as collection_initiate_checkout's other parameters (service_code,
-- fingerprint, caller_check, session, splits, expire_topic); item_no is an item's 1-based place in it.
CREATE OR REPLACE FUNCTION collection_initiate_checkouts(p_client_id uuid, p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  refusal jsonb,
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
    ORDER BY e.a->'session'->>'merchant_transaction_id', e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM collection_initiate_checkout(
      p_client_id => p_client_id,
      p_service_code => a->>'service_code',
      p_fingerprint => a->>'fingerprint',
      p_caller_check => a->>'caller_check',
      p_session => a->'session',
      p_splits => nullif(a->'splits', 'null'),
      p_expire_topic => a->>'expire_topic') r;
  END LOOP;
END
$fn$;
