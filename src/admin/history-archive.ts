import type { ClientBase } from 'pg';
import { HOLD_STATUS } from '../float/float-holds.service';
import {
  DetachedPartition,
  detachMonthsBefore,
  ensurePartitions,
  formatMonth,
  Month,
  monthOf,
  partitionedTables,
} from '../infra/database/partitions';
import { carryArchivedBalances } from '../ledger/archived-balances';

/** Why a month may not be archived yet, worded for the operator. */
export class ArchiveRefused extends Error {}

/**
 * `partitions:archive --before <month>`: detaches every month before it, on every partitioned table, into schema
 * `archive` for export. Refused while those months may still be needed:
 * - the current month (or a later one) is still being written, and is the statement period still open;
 * - a float hold created before `before` and still HELD is money in flight: its payout or airtime recipient is
 *   unresolved, and its reservation's postings are the statement rows a refund will follow.
 * Rows of those months still in a DEFAULT partition are first given their month (`ensurePartitions`), so they
 * leave with it.
 */
export async function archiveHistory(db: ClientBase, before: Month, now: Date = new Date()): Promise<DetachedPartition[]> {
  const current = monthOf(now);
  if (before > current) {
    throw new ArchiveRefused(
      `${formatMonth(current)} is the current month and cannot be archived: --before is ${formatMonth(current)} at the latest`,
    );
  }
  const { rows: holds } = await db.query<{ id: string; created_at: Date }>(
    `SELECT id, created_at FROM float_holds WHERE status = $1 AND created_at < $2 ORDER BY created_at LIMIT 1`,
    [HOLD_STATUS.HELD, before],
  );
  if (holds.length > 0) {
    const month = formatMonth(monthOf(holds[0].created_at));
    throw new ArchiveRefused(`float hold ${holds[0].id} of ${month} is unresolved: --before is ${month} at the latest`);
  }
  await ensurePartitions(db, now);
  const detached: DetachedPartition[] = [];
  for (const { table } of await partitionedTables(db)) {
    detached.push(...(await detachMonthsBefore(db, table, before, table === 'postings' ? carryArchivedBalances(before) : undefined)));
  }
  return detached;
}
