import type { ClientBase } from 'pg';

/**
 * Run as postings partitions are detached (`partitions:archive`), in the same transaction: what the archived
 * postings add up to per account, and how many they are, join that account's row of ledger_archived_balances. So a
 * stored balance still equals its archived balance plus its attached postings (invariant (b)), the attached postings
 * are numbered from the archived ones' count + 1 (invariant (e)), and a statement whose opening posting was archived
 * opens on the archived balance: months are archived oldest first, so it is the balance after them.
 */
export function carryArchivedBalances(archivedBefore: Date) {
  return async (db: ClientBase, partitions: string[]): Promise<void> => {
    await db.query(
      `INSERT INTO ledger_archived_balances AS b (client_id, account_id, balance, postings, archived_before)
       SELECT a.client_id, p.account_id, sum(p.amount), count(*), $1
         FROM (${partitions.map((name) => `SELECT account_id, amount FROM ${name}`).join(' UNION ALL ')}) p
         JOIN ledger_accounts a ON a.id = p.account_id
        GROUP BY a.client_id, p.account_id
       ON CONFLICT (client_id, account_id)
       DO UPDATE SET balance = b.balance + excluded.balance, postings = b.postings + excluded.postings,
         archived_before = greatest(b.archived_before, excluded.archived_before)`,
      [archivedBefore],
    );
  };
}
