import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Collection reversals have their own BullMQ queue (`reversals`, topic `reversals.process`) instead of sharing the
 * payments queue. Reversal work not yet done moves to the new topic and is relayed again: a job already handed to
 * the payments queue under the old name is refused there, and advancing a reversal twice changes nothing.
 */
export class ReversalsQueue1763800000036 implements MigrationInterface {
  name = 'ReversalsQueue1763800000036';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE outbox SET topic = 'reversals.process', relayed_at = NULL WHERE topic = 'payments.reverse' AND done_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE outbox SET topic = 'payments.reverse', relayed_at = NULL WHERE topic = 'reversals.process' AND done_at IS NULL`);
  }
}
