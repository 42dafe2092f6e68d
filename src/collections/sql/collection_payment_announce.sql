-- Schedules a direct charge's result callback (the payload, paymentResult in src/collections/payment.ts): to the request's
-- callback URL and, when the charge asked to notify, to the client's collections endpoint. The one rule of who hears
-- of a charge's result, for the settlement (collection_settle_apply) and the OTP limit (PaymentsService.fail). Takes
-- the payment's values, not its row: on Citus a function reading shards may not run inside a query on a shard.
CREATE OR REPLACE FUNCTION collection_payment_announce(
  p_client_id uuid,
  p_external_reference text,
  p_callback_url text,
  p_notify boolean,
  p_payload jsonb
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  PERFORM callback_schedule(p_client_id, 'collections', p_payload->>'event', p_external_reference, ARRAY[p_callback_url],
                            p_notify, p_payload);
END
$fn$;
