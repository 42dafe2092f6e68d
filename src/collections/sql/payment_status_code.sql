-- A payment status code by its name, as PAYMENT_STATUS (src/collections/payment.ts) names it: how the SQL writes a
-- status, never as a number (test/collections/status-codes.e2e.spec.ts holds the two lists equal and every call's
-- name known). Immutable and inlined, a call with a constant name is folded into its code when a query is planned.
CREATE OR REPLACE FUNCTION payment_status_code(p_name text)
RETURNS smallint
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $fn$
SELECT CASE p_name
  WHEN 'SUCCESSFUL' THEN 700
  WHEN 'FAILED' THEN 701
  WHEN 'REVERSED' THEN 702
  WHEN 'PENDING' THEN 703
  WHEN 'JAMMED' THEN 704
END::smallint
$fn$;
