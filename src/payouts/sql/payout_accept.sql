-- Accepts one payout (local, IMT, B2B): the paying service's checks, the idempotency claim, float_reserve, and the
-- payout with its processing job. A refusal is a row: its outcome, and in detail what its wording needs
-- (PayoutAcceptance, src/payouts/payouts.repository.ts). Called per item by payout_accept_batch.
CREATE OR REPLACE FUNCTION payout_accept(
  p_client_id uuid,
  p_service_code text,
  p_kind text,
  p_payout_reference text,
  p_amount numeric,
  p_currency text,
  p_recipient_amount numeric,
  p_recipient_currency text,
  p_destination_type text,
  p_destination_name text,
  p_recipient_account_number text,
  p_recipient_phone_number text,
  p_recipient_bank_code text,
  p_request jsonb,
  p_callback_url text,
  p_rail text,
  p_topic text,
  p_process_at timestamp with time zone,
  p_paying_states text[]
)
RETURNS TABLE(outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_service  record;
  v_fee      numeric;
  v_payout   bigint;
  v_reserved record;
BEGIN
  SELECT * INTO v_service
  FROM paying_service(p_client_id => p_client_id, p_service_code => p_service_code, p_paying_states => p_paying_states);
  IF v_service.refusal IS NOT NULL THEN
    outcome := v_service.refusal;
  ELSIF v_service.float_currency <> p_currency THEN
    outcome := 'CURRENCY';
    detail := jsonb_build_object('float_currency', v_service.float_currency);
  ELSIF p_amount NOT BETWEEN v_service.minimum_amount AND v_service.maximum_amount THEN
    outcome := 'AMOUNT_OUT_OF_BOUNDS';
    detail := jsonb_build_object('minimum_amount', v_service.minimum_amount::text,
                                 'maximum_amount', v_service.maximum_amount::text);
  END IF;
  IF outcome IS NOT NULL THEN
    RETURN NEXT;
    RETURN;
  END IF;
  v_fee := client_service_fee(v_service.service_id, p_amount);
  -- A block of its own, so that a float short of amount + fee undoes the claim and answers as a row.
  BEGIN
    INSERT INTO payouts (client_id, kind, payout_reference, client_service_id, float_account_id, amount, fee, currency,
      recipient_amount, recipient_currency, destination_type, destination_name, recipient_account_number,
      recipient_phone_number, recipient_bank_code, request, callback_url)
    VALUES (p_client_id, p_kind, p_payout_reference, v_service.service_id, v_service.float_account_id, p_amount, v_fee,
      p_currency, p_recipient_amount, p_recipient_currency, p_destination_type, p_destination_name,
      p_recipient_account_number, p_recipient_phone_number, p_recipient_bank_code, p_request, p_callback_url)
    ON CONFLICT (client_id, payout_reference) DO NOTHING
    RETURNING id INTO v_payout;
    IF v_payout IS NULL THEN
      outcome := 'DUPLICATE';
    ELSE
      SELECT * INTO v_reserved
      FROM float_reserve(p_client_id => p_client_id, p_float_account_id => v_service.float_account_id,
                         p_currency => p_currency, p_rail => p_rail, p_amounts => ARRAY[p_amount], p_fees => ARRAY[v_fee]);
      UPDATE payouts SET hold_id = v_reserved.hold_ids[1], float_balance_after = v_reserved.float_balance_after
      WHERE id = v_payout;
      INSERT INTO outbox (topic, payload, available_at)
      VALUES (p_topic, jsonb_build_object('payoutId', v_payout::text), p_process_at);
      outcome := 'ACCEPTED';
    END IF;
  EXCEPTION WHEN SQLSTATE 'LF001' THEN
    outcome := 'INSUFFICIENT_FLOAT';
    detail := jsonb_build_object('fee', v_fee::text);
  END;
  RETURN NEXT;
END
$fn$;
