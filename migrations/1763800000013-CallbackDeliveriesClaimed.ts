import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Callback deliveries are claimed straight from their table by the worker's deliverer (a due pending delivery, or
 * a replay asked for), no longer relayed through the outbox and BullMQ: the indexes those claims walk, the claim
 * itself, and the outbox rows of the old callback jobs closed, since the delivery rows they point at carry the same
 * due times and replay requests. `down` writes one outbox row per delivery still to be attempted, as the old build
 * expects.
 *
 * The claim walks the due index in due order and stops at the batch: it is a function so that it can forbid the
 * plan Postgres picks while its statistics lag a burst (a bitmap scan of every due delivery, sorted on each claim,
 * which makes draining a backlog of n deliveries cost n² / batch).
 */
export class CallbackDeliveriesClaimed1763800000013 implements MigrationInterface {
  name = 'CallbackDeliveriesClaimed1763800000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX callback_deliveries_due_idx ON callback_deliveries (next_attempt_at) WHERE status = 'PENDING';
      CREATE INDEX callback_deliveries_replay_idx ON callback_deliveries (replay_requested_at) WHERE replay_requested_at IS NOT NULL;
      UPDATE outbox SET relayed_at = coalesce(relayed_at, now()), done_at = now() WHERE topic = 'callbacks.deliver' AND done_at IS NULL;

      -- Up to batch deliveries no live lease holds, leased for lease_seconds: replays asked for (oldest request
      -- first), and pending deliveries due (oldest first). lease is the lease at full precision, for recording.
      CREATE FUNCTION claim_callback_deliveries(batch integer, lease_seconds numeric)
      RETURNS TABLE (id uuid, client_id uuid, kind varchar, event varchar, url varchar, payload jsonb, status varchar,
                     attempts smallint, replays smallint, first_attempt_at timestamptz, lease text, replay boolean)
      LANGUAGE sql SET enable_bitmapscan = off SET enable_sort = off AS $$
        WITH replays AS (
          SELECT d.id FROM callback_deliveries d
          WHERE d.replay_requested_at IS NOT NULL AND (d.lease_until IS NULL OR d.lease_until < now())
          ORDER BY d.replay_requested_at LIMIT batch FOR UPDATE SKIP LOCKED
        ), due AS (
          SELECT d.id FROM callback_deliveries d
          WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
          ORDER BY d.next_attempt_at LIMIT batch FOR UPDATE SKIP LOCKED
        )
        UPDATE callback_deliveries d SET lease_until = now() + make_interval(secs => lease_seconds)
        WHERE d.id IN (SELECT c.id FROM (SELECT r.id FROM replays r UNION SELECT u.id FROM due u) c LIMIT batch)
        RETURNING d.id, d.client_id, d.kind, d.event, d.url, d.payload, d.status, d.attempts, d.replays, d.first_attempt_at,
          d.lease_until::text, d.replay_requested_at IS NOT NULL
      $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO outbox (topic, payload, available_at)
        SELECT 'callbacks.deliver', jsonb_build_object('deliveryId', id), next_attempt_at FROM callback_deliveries WHERE status = 'PENDING'
        UNION ALL
        SELECT 'callbacks.deliver', jsonb_build_object('deliveryId', id, 'replay', 'true'), replay_requested_at FROM callback_deliveries
        WHERE replay_requested_at IS NOT NULL;
      DROP FUNCTION claim_callback_deliveries(integer, numeric);
      DROP INDEX callback_deliveries_replay_idx;
      DROP INDEX callback_deliveries_due_idx;
    `);
  }
}
