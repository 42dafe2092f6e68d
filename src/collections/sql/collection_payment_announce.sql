-- Schedules a direct charge's result callback (the payload, paymentResult in src/collections/payment.ts): to the request's
-- callback URL and, when the charge asked to notify, to the client's collections endpoint. The one rule of who hears
-- of a charge's result, for the settlement (collection_settle_apply) and the OTP limit (PaymentsService.fail).
CREATE OR REPLACE FUNCTION collection_payment_announce(p payments, p_payload jsonb)
RETURNS void
LANGUAGE sql
AS $fn$
SELECT callback_schedule(p.client_id, 'collections', p_payload->>'event', p.external_reference, ARRAY[p.callback_url::text],
                         p.notify_client OR p.notify_originator, p_payload)
$fn$;
