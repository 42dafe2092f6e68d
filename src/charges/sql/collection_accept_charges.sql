-- Group commit of collection_accept_charge for one client (p_client_id): one call per group, items in reference order.
-- p_items is an array of objects named as collection_accept_charge's other parameters (service_code, fingerprint,
-- caller_check, charge, splits, payment_url_prefix, settle_topic, settle_key, settle_at); item_no is an item's 1-based
-- place in it.
CREATE OR REPLACE FUNCTION collection_accept_charges(p_client_id uuid, p_items jsonb)
RETURNS TABLE(
  item_no integer,
  outcome text,
  refusal jsonb,
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
    ORDER BY e.a->'charge'->>'external_reference', e.n
  LOOP
    RETURN QUERY SELECT n::int, r.* FROM collection_accept_charge(
      p_client_id => p_client_id,
      p_service_code => a->>'service_code',
      p_fingerprint => a->>'fingerprint',
      p_caller_check => a->>'caller_check',
      p_charge => a->'charge',
      p_splits => nullif(a->'splits', 'null'),
      p_payment_url_prefix => a->>'payment_url_prefix',
      p_settle_topic => a->>'settle_topic',
      p_settle_key => a->>'settle_key',
      p_settle_at => (a->>'settle_at')::timestamptz) r;
  END LOOP;
END
$fn$;
