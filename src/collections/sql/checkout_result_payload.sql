-- A checkout session's result: its callback body and the status query's answer (collection document §2), json with
-- the keys in the document's order. A payment's record is the charge result (paymentResult, src/collections/payment.ts)
-- with a numeric payment_status and payment_account_reference: test/collections/checkout-result-payload.e2e.spec.ts
-- holds the two equal.
CREATE OR REPLACE FUNCTION checkout_result_payload(p_client_id uuid, p_session_id bigint)
RETURNS json
LANGUAGE plpgsql
AS $fn$
BEGIN
  RETURN (
  SELECT json_build_object(
    'amount', trunc(cs.amount)::text,
    'checkout_reference', cs.checkout_reference,
    'currency', cs.currency,
    'merchant_transaction_id', cs.merchant_transaction_id,
    'narration', cs.narration,
    'payments', coalesce((
      SELECT json_agg(json_build_object(
        'event', CASE p.payment_status WHEN payment_status_code('SUCCESSFUL') THEN 'successful_payment'
                                       WHEN payment_status_code('FAILED') THEN 'failed_payment'
                                       WHEN payment_status_code('REVERSED') THEN 'reversed_payment' ELSE 'pending_payment' END,
        'amount', round(p.service_amount, 4)::text,
        'extra_data', p.extra_data,
        'client_code', c.code,
        'country_code', p.country_code,
        'payer_msisdn', p.payer_msisdn,
        'payment_date', to_char(coalesce(p.settled_at, p.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'service_code', s.code,
        'currency_code', p.currency,
        'account_number', p.account_number,
        'payment_status', p.payment_status,
        'transaction_id', p.id::text,
        'payment_id', p.id::text,
        'payer_narration', p.description,
        'charge_request_id', p.id::text,
        'external_reference', p.external_reference,
        'receiver_narration', p.description,
        'payment_method_code', p.payment_method_code,
        'payer_transaction_id', coalesce(p.payer_transaction_id, ''),
        'payment_account_reference', p.payer_msisdn) ORDER BY p.id)
      FROM payments p JOIN clients c ON c.id = p.client_id
      JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id
      WHERE p.client_id = cs.client_id AND p.checkout_session_id = cs.id AND p.payment_status <> payment_status_code('PENDING')), '[]'::json),
    'status', cs.status,
    'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
  FROM checkout_sessions cs WHERE cs.client_id = p_client_id AND cs.id = p_session_id);
END
$fn$;
