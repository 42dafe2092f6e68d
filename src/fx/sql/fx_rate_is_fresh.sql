-- Whether a rate stored at p_updated_at may still be shown or used: at most p_max_age_ms old (FX_MAX_RATE_AGE_MS), on
-- the database clock. The one home of that rule, for conversions (fx_conversion_rate) and GET /v1/fx (FxService).
CREATE OR REPLACE FUNCTION fx_rate_is_fresh(p_updated_at timestamp with time zone, p_max_age_ms bigint)
RETURNS boolean
LANGUAGE sql STABLE
AS $fn$
SELECT p_updated_at >= now() - p_max_age_ms * interval '1 millisecond'
$fn$;
