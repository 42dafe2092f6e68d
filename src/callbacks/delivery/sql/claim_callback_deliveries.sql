-- Claims up to p_batch deliveries for a lease of p_lease_seconds (SKIP LOCKED), so concurrent workers never send one
-- twice: replays asked for and PENDING deliveries due, oldest first, that no live lease holds
-- (CallbackDeliverer.claim, src/callbacks/delivery/callback-deliverer.service.ts). A function so that it can forbid
-- the bitmap-and-sort plan Postgres picks while its statistics lag a burst; 'PENDING' is written out so that the
-- partial index serves.
CREATE OR REPLACE FUNCTION claim_callback_deliveries(p_batch integer, p_lease_seconds numeric)
RETURNS TABLE(
  id uuid,
  client_id uuid,
  kind character varying,
  event character varying,
  url character varying,
  payload jsonb,
  status character varying,
  attempts smallint,
  replays smallint,
  first_attempt_at timestamp with time zone,
  lease text,
  replay boolean
)
LANGUAGE plpgsql
SET enable_bitmapscan = 'off'
SET enable_sort = 'off'
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH replays AS (
    SELECT d.id FROM callback_deliveries d
    WHERE d.replay_requested_at IS NOT NULL AND (d.lease_until IS NULL OR d.lease_until < now())
    ORDER BY d.replay_requested_at LIMIT p_batch FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT d.id FROM callback_deliveries d
    WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
    ORDER BY d.next_attempt_at LIMIT p_batch FOR UPDATE SKIP LOCKED
  )
  UPDATE callback_deliveries d SET lease_until = now() + make_interval(secs => p_lease_seconds)
  WHERE d.id IN (SELECT c.id FROM (SELECT r.id FROM replays r UNION SELECT u.id FROM due u) c LIMIT p_batch)
  RETURNING d.id, d.client_id, d.kind, d.event, d.url, d.payload, d.status, d.attempts, d.replays, d.first_attempt_at,
    d.lease_until::text, d.replay_requested_at IS NOT NULL;
END
$fn$;
