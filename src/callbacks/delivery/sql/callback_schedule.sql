-- Writes the callback deliveries of an event: the one writer of deliveries. Its NOTIFY, delivered at the caller's
-- commit, wakes the callback relays (CallbackRelay, src/callbacks/delivery/callback-relay.service.ts); Postgres folds
-- the equal notifications of one transaction into one.
CREATE OR REPLACE FUNCTION callback_schedule(
  p_client_id uuid,
  p_kind text,
  p_event text,
  p_reference text,
  p_urls text[],
  p_to_endpoint boolean,
  p_payload jsonb
)
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload)
  SELECT p_client_id, p_kind, p_event, p_reference, u.url, p_payload
  FROM unnest(p_urls || CASE WHEN p_to_endpoint THEN (
          SELECT s.url::text FROM client_callback_settings s WHERE s.client_id = p_client_id AND s.kind = p_kind) END)
       WITH ORDINALITY u(url, ord)
  WHERE u.url IS NOT NULL
  GROUP BY u.url ORDER BY min(u.ord);
  IF FOUND THEN
    PERFORM pg_notify('callbacks', '');
  END IF;
END
$fn$;
