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

CREATE OR REPLACE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
