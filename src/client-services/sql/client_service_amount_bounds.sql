-- Whether an amount is outside a client service's transaction bounds (its minimum and maximum allowed): the values
-- an AMOUNT_BOUNDS refusal is worded with, by name and as Postgres prints them, or null when the amount is within.
-- sql and no table read, so Postgres inlines it into the calling query.
CREATE OR REPLACE FUNCTION client_service_amount_bounds(p_amount numeric, p_minimum numeric, p_maximum numeric)
RETURNS jsonb
LANGUAGE sql STABLE
AS $fn$
SELECT CASE WHEN p_amount NOT BETWEEN p_minimum AND p_maximum
            THEN jsonb_build_object('minimum', p_minimum::text, 'maximum', p_maximum::text) END
$fn$;
