-- Group commit of payout_accept: p_items is a JSON array of objects whose keys are payout_accept's argument names
-- without p_ (amounts as JSON strings; PayoutsRepository.accept, src/payouts/payouts.repository.ts). Floats and
-- in-flight accounts are locked once per group in id order, payouts taken in (client, reference) order.
CREATE OR REPLACE FUNCTION payout_accept_batch(p_items jsonb)
RETURNS TABLE(item_no integer, outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  i record;
BEGIN
  -- The floats of the named services and the in-flight accounts of their rails and currencies. One not created
  -- yet is created by the first reservation that needs it (so a refused payout leaves no account behind).
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT s.settlement_account_id AS id
    FROM jsonb_to_recordset(p_items) AS p(client_id uuid, service_code text)
    JOIN client_services s ON s.client_id = p.client_id AND s.code = p.service_code
    WHERE s.settlement_account_id IS NOT NULL
    UNION
    SELECT a.id
    FROM jsonb_to_recordset(p_items) AS p(client_id uuid, currency text, rail text)
    JOIN ledger_accounts a ON a.client_id = p.client_id AND a.kind = p.rail AND a.currency = p.currency AND a.kind <> 'WALLET'
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  FOR i IN
    SELECT p.* FROM ROWS FROM (jsonb_to_recordset(p_items) AS (
      client_id uuid, service_code text, kind text, payout_reference text, amount numeric, currency text,
      recipient_amount numeric, recipient_currency text, destination_type text, destination_name text,
      recipient_account_number text, recipient_phone_number text, recipient_bank_code text, request jsonb,
      callback_url text, rail text, topic text, process_at timestamptz, paying_states text[]
    )) WITH ORDINALITY AS p
    ORDER BY p.client_id::text, p.payout_reference, p.ordinality
  LOOP
    RETURN QUERY SELECT i.ordinality::int, r.outcome, r.detail FROM payout_accept(
      p_client_id => i.client_id, p_service_code => i.service_code, p_kind => i.kind,
      p_payout_reference => i.payout_reference, p_amount => i.amount, p_currency => i.currency,
      p_recipient_amount => i.recipient_amount, p_recipient_currency => i.recipient_currency,
      p_destination_type => i.destination_type, p_destination_name => i.destination_name,
      p_recipient_account_number => i.recipient_account_number, p_recipient_phone_number => i.recipient_phone_number,
      p_recipient_bank_code => i.recipient_bank_code, p_request => i.request, p_callback_url => i.callback_url,
      p_rail => i.rail, p_topic => i.topic, p_process_at => i.process_at, p_paying_states => i.paying_states) r;
  END LOOP;
END
$fn$;
