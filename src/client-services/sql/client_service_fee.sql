-- The fee of a client's service on an amount: its tier's, else its flat or percentage fee, rounded to 4 places.
-- plpgsql, not sql: a plpgsql body's plan is cached for the session, whereas an sql function whose body reads a table
-- is planned again in every query that calls it (one per accepted charge, payout or transfer).
CREATE OR REPLACE FUNCTION client_service_fee(p_client_id uuid, p_service_id uuid, p_amount numeric)
RETURNS numeric
LANGUAGE plpgsql STABLE
AS $fn$
BEGIN
  RETURN (
    SELECT CASE
      WHEN NOT s.has_transaction_fee THEN 0
      WHEN EXISTS (SELECT 1 FROM client_service_fee_tiers t WHERE t.client_id = p_client_id AND t.client_service_id = s.id) THEN coalesce((
        SELECT CASE t.fee_type WHEN 'FIXED' THEN round(t.fee, 4) ELSE round(p_amount * t.fee * 0.01, 4) END
        FROM client_service_fee_tiers t
        WHERE t.client_id = p_client_id AND t.client_service_id = s.id AND p_amount BETWEEN t.minimum_amount AND t.maximum_amount
        ORDER BY t.minimum_amount LIMIT 1), 0)
      WHEN s.transaction_fee_type = 'FIXED' THEN round(s.transaction_fee, 4)
      WHEN s.transaction_fee_type = 'PERCENTAGE' THEN round(p_amount * s.transaction_fee * 0.01, 4)
      ELSE 0 END
    FROM client_services s WHERE s.client_id = p_client_id AND s.id = p_service_id);
END
$fn$;
