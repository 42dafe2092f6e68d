-- Wakes the outbox relays (OutboxRelay, src/infra/queue/outbox-relay.service.ts) when outbox rows are written: one
-- NOTIFY per writing statement, delivered at its transaction's commit (Postgres folds equal notifications of one
-- transaction into one), so the relays wait instead of polling. The trigger is made here with its function, so that
-- re-applying this file (which drops the function, and the trigger with it) makes both again.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
  PERFORM pg_notify('outbox', '');
  RETURN NULL;
END
$fn$;

-- Not on a Citus cluster once the outbox is distributed: Citus refuses to distribute a table with a trigger (db:distribute
-- drops it), and one on the shards would notify on the worker nodes, where no relay listens; the relays sweep there
-- instead (docs/scaling.md, "Waking the relays").
DO $do$
DECLARE
  v_distributed boolean := false;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = ''outbox''::regclass)' INTO v_distributed;
  END IF;
  IF NOT v_distributed THEN
    CREATE OR REPLACE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
  END IF;
END
$do$;
