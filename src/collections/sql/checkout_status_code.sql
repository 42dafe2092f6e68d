-- A checkout session status code by its name, as CHECKOUT_STATUS (src/collections/checkout-session.ts) names it: how
-- the SQL writes a status, never as a number (test/collections/status-codes.e2e.spec.ts holds the two lists equal and
-- every call's name known). Immutable and inlined, a call with a constant name is folded into its code when a query
-- is planned.
CREATE OR REPLACE FUNCTION checkout_status_code(p_name text)
RETURNS smallint
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $fn$
SELECT CASE p_name
  WHEN 'PAID' THEN 801
  WHEN 'PART_PAID' THEN 802
  WHEN 'UNPAID' THEN 803
  WHEN 'EXPIRED' THEN 820
  WHEN 'REVERSED' THEN 840
  WHEN 'JAMMED' THEN 850
  WHEN 'PROCESSING' THEN 851
END::smallint
$fn$;
