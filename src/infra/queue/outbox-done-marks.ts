import { DataSource, EntityManager } from 'typeorm';
import { GroupCommit } from '../database/group-commit';

/** The rows of one client that a job finished. */
export interface DoneRows {
  clientId: string;
  outboxIds: string[];
}

/**
 * Marks outbox rows done once their work finished, so the relay never offers them again. The marks of jobs finishing
 * together are one transaction (group commit): a mark is bookkeeping, not worth a commit of its own. Each statement
 * names its client, as Citus wants of an UPDATE on a distributed table.
 */
export function outboxDoneMarks(db: DataSource): GroupCommit<DoneRows, null> {
  return new GroupCommit<DoneRows, null>(
    async (marks) => {
      const byClient = new Map<string, string[]>();
      for (const { clientId, outboxIds } of marks) byClient.set(clientId, [...(byClient.get(clientId) ?? []), ...outboxIds]);
      const mark = (manager: EntityManager, [clientId, ids]: [string, string[]]) =>
        manager.query(`UPDATE outbox SET done_at = now() WHERE client_id = $1 AND id = ANY($2::bigint[])`, [clientId, ids]);
      // One client's marks (the usual case) are one statement on its own, with no round trips for BEGIN and COMMIT.
      if (byClient.size === 1) await mark(db.manager, [...byClient][0]);
      else
        await db.transaction(async (manager) => {
          for (const entry of byClient) await mark(manager, entry);
        });
      return marks.map(() => null);
    },
    { maxItems: 1000, maxInFlight: 1 },
  );
}
