import { Client } from 'pg';
import type { QueryRunner } from 'typeorm';
import { ReversalsQueue1763800000036 } from '../../migrations/1763800000036-ReversalsQueue';

/**
 * Reversal work written under the old topic when collection reversals shared the payments queue moves to the
 * reversals queue's topic and is relayed again; finished work keeps its history as it was.
 */
describe('migration ReversalsQueue (036)', () => {
  it('moves unfinished reversal work to reversals.process, to be relayed again, and leaves finished work alone', async () => {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query('BEGIN');
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO outbox (client_id, topic, payload, relayed_at, done_at) VALUES
           (gen_random_uuid(), 'payments.reverse', '{"reversalId":"r-waiting"}', NULL, NULL),
           (gen_random_uuid(), 'payments.reverse', '{"reversalId":"r-relayed"}', now(), NULL),
           (gen_random_uuid(), 'payments.reverse', '{"reversalId":"r-done"}', now(), now()),
           (gen_random_uuid(), 'payments.expire-checkout', '{"sessionId":"s-1"}', NULL, NULL)
         RETURNING id`,
      );
      await new ReversalsQueue1763800000036().up({ query: (sql: string) => db.query(sql) } as unknown as QueryRunner);
      const after = await db.query<{ id: string; topic: string; relayed: boolean }>(
        `SELECT id, topic, relayed_at IS NOT NULL AS relayed FROM outbox WHERE id = ANY($1) ORDER BY id`,
        [rows.map((row) => row.id)],
      );
      expect(after.rows.map(({ topic, relayed }) => [topic, relayed])).toEqual([
        ['reversals.process', false],
        ['reversals.process', false],
        ['payments.reverse', true],
        ['payments.expire-checkout', false],
      ]);
    } finally {
      await db.query('ROLLBACK').catch(() => undefined);
      await db.end();
    }
  });
});
