import { DataSource } from 'typeorm';
import { GroupCommit } from '../database/group-commit';
import { PreparedStatement, runPrepared } from '../database/prepared';

const MARK_DONE: PreparedStatement = { name: 'outbox_mark_done', text: 'UPDATE outbox SET done_at = now() WHERE id = ANY($1::bigint[])' };

/**
 * Marks outbox rows done once their work finished, so neither the relay nor the claimer offers them again. The marks
 * of work finishing together are one statement (group commit): a mark is bookkeeping, not worth a commit of its own.
 */
export function outboxDoneMarks(db: DataSource): GroupCommit<string, null> {
  return new GroupCommit<string, null>(
    async (ids) => {
      await runPrepared(db, MARK_DONE, [ids]);
      return ids.map(() => null);
    },
    { maxItems: 1000, maxInFlight: 1 },
  );
}
