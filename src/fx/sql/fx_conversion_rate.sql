-- The rate to convert between two currencies in a direction, or null when it is older than the allowed age. PL/pgSQL:
-- Citus plans no LANGUAGE sql body with parameters over its tables (fx_rates is a reference table).
CREATE OR REPLACE FUNCTION fx_conversion_rate(p_from text, p_to text, p_direction text, p_max_age_ms bigint)
RETURNS TABLE(rate numeric, newest_rate_at timestamp with time zone)
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
RETURN QUERY
WITH quotes AS (
  SELECT r.base_currency::text AS base, r.buying, r.selling, r.updated_at, fx_rate_is_fresh(r.updated_at, p_max_age_ms) AS fresh
  FROM fx_rates r
  WHERE (r.base_currency, r.currency) IN ((p_to::char(3), p_from::char(3)), (p_from::char(3), p_to::char(3)))
)
SELECT coalesce(
         (SELECT round(CASE p_direction WHEN 'INTO_WALLET' THEN q.buying ELSE q.selling END, 8)
          FROM quotes q WHERE q.base = p_to AND q.fresh),
         (SELECT round(1::numeric(41, 40) / CASE p_direction WHEN 'INTO_WALLET' THEN q.selling ELSE q.buying END, 8)
          FROM quotes q WHERE q.base = p_from AND q.fresh)),
       (SELECT max(q.updated_at) FROM quotes q);
END
$fn$;
