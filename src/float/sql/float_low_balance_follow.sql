-- The one home of the low-balance alert rule (issue 34). The posting core calls it with the balance after every
-- batch of each account it moved, while it still holds those accounts' locks, so postings to one float follow each
-- other here and concurrent crossings give one alert. A float's available balance is its wallet's balance (holds
-- have left it). An armed alert fires when the balance is below the threshold: it turns low, counts the alert,
-- schedules the float.low_balance callback to the client's payouts endpoint and, when a contact is set, queues an
-- SMS. A low alert re-arms once the balance is back at rearm_at (threshold + 10%), silently. Nothing else changes
-- the row, so staying above or below sends nothing. The posting core calls it client by client (p_client_id), with
-- the whole batch's accounts (p_clients, p_accounts, p_balances: one element per account).
CREATE OR REPLACE FUNCTION float_low_balance_follow(p_client_id uuid, p_clients uuid[], p_accounts uuid[], p_balances numeric[])
RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  r record;
  v_number text;
  v_currency text;
  v_codes jsonb;
BEGIN
  FOR r IN
    UPDATE float_alerts f
       SET low = x.balance < f.threshold, alerts = f.alerts + (x.balance < f.threshold)::int, changed_at = now()
      FROM unnest(p_clients, p_accounts, p_balances) x(client_id, account_id, balance)
     WHERE f.client_id = p_client_id AND x.client_id = p_client_id AND f.account_id = x.account_id
       AND CASE WHEN f.low THEN x.balance >= f.rearm_at ELSE x.balance < f.threshold END
    RETURNING f.client_id, f.account_id, f.low, f.alerts, f.threshold, f.rearm_at, f.minor_units, f.contact_msisdn, f.changed_at,
              x.balance
  LOOP
    CONTINUE WHEN NOT r.low;
    -- Read first: on Citus a function writing shards may not run inside a query on a shard.
    SELECT account_number, currency INTO v_number, v_currency FROM ledger_accounts
     WHERE client_id = p_client_id AND id = r.account_id;
    SELECT coalesce(jsonb_agg(s.code ORDER BY s.code), '[]') INTO v_codes FROM client_services s
     WHERE s.client_id = p_client_id AND s.settlement_account_id = r.account_id;
    PERFORM callback_schedule(r.client_id, 'payouts', 'float.low_balance', v_number, '{}'::text[], true,
      jsonb_build_object(
        'event', 'float.low_balance',
        'account_number', v_number,
        'currency', v_currency,
        'available_balance', round(r.balance, 4)::text,
        'threshold', r.threshold::text,
        'rearm_balance', r.rearm_at::text,
        'service_codes', v_codes,
        'alert_number', r.alerts,
        'crossed_at', to_char(r.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
    IF r.contact_msisdn IS NOT NULL THEN
      PERFORM notifications_queue_sms(ARRAY[r.client_id], ARRAY['float-low-' || v_number || '-' || r.alerts],
        ARRAY[r.contact_msisdn::text],
        ARRAY[format('Low float: account %s has %s %s available, below your alert level of %s %s.', v_number,
                     v_currency, round(r.balance, r.minor_units), v_currency, round(r.threshold, r.minor_units))]);
    END IF;
  END LOOP;
END
$fn$;
