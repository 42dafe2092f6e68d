import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Callback deliveries are claimed straight from their table by the worker's deliverer (a due pending delivery, or
 * a replay asked for), no longer relayed through the outbox and BullMQ: the indexes those claims walk, and the
 * outbox rows of the old callback jobs closed, since the delivery rows they point at carry the same due times and
 * replay requests. `down` writes one outbox row per delivery still to be attempted, as the old build expects.
 */
export class CallbackDeliveriesClaimed1763800000013 implements MigrationInterface {
  name = 'CallbackDeliveriesClaimed1763800000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX callback_deliveries_due_idx ON callback_deliveries (next_attempt_at) WHERE status = 'PENDING';
      CREATE INDEX callback_deliveries_replay_idx ON callback_deliveries (replay_requested_at) WHERE replay_requested_at IS NOT NULL;
      UPDATE outbox SET relayed_at = coalesce(relayed_at, now()), done_at = now() WHERE topic = 'callbacks.deliver' AND done_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO outbox (topic, payload, available_at)
        SELECT 'callbacks.deliver', jsonb_build_object('deliveryId', id), next_attempt_at FROM callback_deliveries WHERE status = 'PENDING'
        UNION ALL
        SELECT 'callbacks.deliver', jsonb_build_object('deliveryId', id, 'replay', 'true'), replay_requested_at FROM callback_deliveries
        WHERE replay_requested_at IS NOT NULL;
      DROP INDEX callback_deliveries_replay_idx;
      DROP INDEX callback_deliveries_due_idx;
    `);
  }
}
