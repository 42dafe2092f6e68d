-- Whether a checkout session's time is up: its end (expires_at) has passed on the database clock, the one clock every
-- path asks (docs/decisions.md, "Checkout expiry: one rule, on the database clock"). From then on the session takes no payment, unpaid or
-- part paid (CheckoutService); an unpaid one expires (820) and a part-paid one stays 802 (checkout_follow_payments).
CREATE OR REPLACE FUNCTION checkout_session_ended(p_expires_at timestamp with time zone)
RETURNS boolean
LANGUAGE sql
VOLATILE
AS $fn$
SELECT p_expires_at <= clock_timestamp()
$fn$;
