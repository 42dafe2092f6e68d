-- The client service that pays a bulk airtime request: the one it names, else the client's default airtime service
-- (the oldest when several); null when it names none and there is no default.
CREATE OR REPLACE FUNCTION airtime_service_code(p_client_id uuid, p_service_code text)
RETURNS text
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
  RETURN coalesce(p_service_code, (
    SELECT s.code FROM client_services s
    WHERE s.client_id = p_client_id AND s.is_default_airtime
    ORDER BY s.created_at LIMIT 1));
END
$fn$;
