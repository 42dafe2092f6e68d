-- Group commit of airtime_accept for one client: p_items is a JSON array of objects whose keys are airtime_accept's
-- other argument names without p_ (recipients an array of {phone_number, amount}, amounts as JSON strings; AirtimeRepository.accept,
-- src/airtime/airtime.repository.ts). Floats and in-flight accounts are locked once per group in id order, requests
-- taken in reference order.
CREATE OR REPLACE FUNCTION airtime_accept_batch(p_client_id uuid, p_items jsonb)
RETURNS TABLE(item_no integer, outcome text, detail jsonb)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_accounts uuid[];
  v_codes text[]; v_rails text[];
  i record;
BEGIN
  -- The floats of the paying services and the in-flight accounts of the rail in their currencies; as for payouts, one
  -- not created yet is created by the first reservation that needs it.
  -- The paying services named first: on Citus a function reading shards may not run inside a query on a shard.
  SELECT array_agg(airtime_service_code(p_client_id => p_client_id, p_service_code => q.service_code)), array_agg(q.rail)
    INTO v_codes, v_rails
    FROM jsonb_to_recordset(p_items) AS q(service_code text, rail text);
  WITH floats AS (
    SELECT DISTINCT s.settlement_account_id AS id, q.rail
    FROM unnest(v_codes, v_rails) q(code, rail)
    JOIN client_services s ON s.client_id = p_client_id AND s.code = q.code
    WHERE s.settlement_account_id IS NOT NULL
  )
  SELECT array_agg(x.id) INTO v_accounts FROM (
    SELECT f.id FROM floats f
    UNION
    SELECT a.id FROM floats f JOIN ledger_accounts fa ON fa.client_id = p_client_id AND fa.id = f.id
    JOIN ledger_accounts a ON a.client_id = p_client_id AND a.kind = f.rail AND a.currency = fa.currency
  ) x;
  PERFORM 1 FROM ledger_accounts la WHERE la.client_id = p_client_id AND la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

  FOR i IN
    SELECT q.* FROM ROWS FROM (jsonb_to_recordset(p_items) AS (
      reference text, service_code text, recipients jsonb, message text, rail text, topic text,
      recipients_per_job integer, process_at timestamptz, paying_states text[]
    )) WITH ORDINALITY AS q
    ORDER BY q.reference, q.ordinality
  LOOP
    RETURN QUERY SELECT i.ordinality::int, r.outcome, r.detail FROM airtime_accept(
      p_client_id => p_client_id, p_reference => i.reference, p_service_code => i.service_code,
      p_recipients => i.recipients, p_message => i.message, p_rail => i.rail, p_topic => i.topic,
      p_recipients_per_job => i.recipients_per_job, p_process_at => i.process_at, p_paying_states => i.paying_states) r;
  END LOOP;
END
$fn$;
