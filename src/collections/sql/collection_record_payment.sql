-- Records a payment, a direct charge (collection_accept_charge) or a payment of a checkout session (PaymentsRepository.insert):
-- the one INSERT into payments. p: the payment's columns (an id given or taken from the sequence; the payer pays the
-- amount and the transaction charge). Answers the row, or one of nulls when a direct charge with the same reference
-- committed first (the partial unique index made this insert wait for it); a session's payments share the session's
-- reference, so theirs always goes in.
CREATE OR REPLACE FUNCTION collection_record_payment(p payments)
RETURNS payments
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_row payments;
BEGIN
  INSERT INTO payments (id, client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
    origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number,
    currency, country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge,
    payment_method_code, extra_data, description, notify_client, notify_originator, callback_url, next_step, payment_url,
    split_settlements)
  VALUES (coalesce(p.id, nextval(pg_get_serial_sequence('payments', 'id'))), p.client_id, p.client_service_id,
    p.checkout_session_id, p.external_reference, p.request_fingerprint, p.origin_channel_code, p.originator_msisdn,
    p.payer_msisdn, p.payer_name, p.payer_email, p.account_number, p.invoice_number, p.currency, p.country_code,
    p.service_amount, p.transaction_charge, p.service_amount + p.transaction_charge, p.merchant_fee, p.add_transaction_charge,
    p.payment_method_code, p.extra_data, p.description, p.notify_client, p.notify_originator, p.callback_url, p.next_step,
    p.payment_url, p.split_settlements)
  ON CONFLICT (client_id, external_reference) WHERE checkout_session_id IS NULL DO NOTHING
  RETURNING * INTO v_row;
  RETURN v_row;
END
$fn$;
