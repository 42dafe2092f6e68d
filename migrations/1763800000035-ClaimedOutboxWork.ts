import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows are now taken two ways: the hot topics are claimed by the workers straight from Postgres, topic by
 * topic, and the rest are relayed to BullMQ. Both look for due rows of given topics, so the due index leads with the
 * topic: a claim of one topic no longer walks past a backlog of another's due rows.
 */
export class ClaimedOutboxWork1763800000035 implements MigrationInterface {
  name = 'ClaimedOutboxWork1763800000035';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX outbox_due_by_topic_idx ON outbox (topic, available_at, id) WHERE relayed_at IS NULL`);
    await q.query(`DROP INDEX outbox_due_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX outbox_due_idx ON outbox (available_at, id) WHERE relayed_at IS NULL`);
    await q.query(`DROP INDEX outbox_due_by_topic_idx`);
  }
}
