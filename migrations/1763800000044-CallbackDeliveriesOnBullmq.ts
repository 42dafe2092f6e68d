import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Callback deliveries run as BullMQ jobs (issue 32): the row stays the truth, and `relayed_at` says when it was handed
 * to BullMQ (null: the relay has it to hand over). The claim's lease goes; BullMQ's job lock does its work. The
 * relay reads what it has to hand over through the partial index.
 */
export class CallbackDeliveriesOnBullmq1763800000044 implements MigrationInterface {
  name = 'CallbackDeliveriesOnBullmq1763800000044';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE callback_deliveries ADD COLUMN relayed_at timestamptz, DROP COLUMN lease_until;
      CREATE INDEX callback_deliveries_to_relay_idx ON callback_deliveries (next_attempt_at)
        WHERE relayed_at IS NULL AND (status = 'PENDING' OR replay_requested_at IS NOT NULL);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX callback_deliveries_to_relay_idx;
      ALTER TABLE callback_deliveries DROP COLUMN relayed_at, ADD COLUMN lease_until timestamptz;
    `);
  }
}
