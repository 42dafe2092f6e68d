import type { ClientBase } from 'pg';

/**
 * Monthly partitions of the history tables (migration 1763800000034): every table partitioned by range on a
 * timestamp, found in the catalog, so a table partitioned later needs no list here. A month is UTC, and its
 * partition is `<table>_YYYY_MM`; rows of a month without one sit in `<table>_default`.
 */

/** How many months after the current one `ensurePartitions` prepares. */
export const MONTHS_AHEAD = 3;

/**
 * How long partition DDL waits for each table lock, and how often it tries. Inserts queue behind a waiting ACCESS
 * EXCLUSIVE request, so each wait is short; and it is below deadlock_timeout (1 s by default), so if a lock cycle
 * with a money transaction forms anyway, this side gives up before Postgres would cancel the money transaction.
 */
const LOCK_TIMEOUT = '500ms';
const LOCK_TRIES = 10;

/** A month, as the UTC instant it starts. */
export type Month = Date;

export function monthOf(at: Date): Month {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function addMonths(month: Month, count: number): Month {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + count, 1));
}

/** "2026-11" for November 2026; null for anything that is not a calendar month. */
export function parseMonth(text: string): Month | null {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  return match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) : null;
}

export const formatMonth = (month: Month) => month.toISOString().slice(0, 7);

export const partitionName = (table: string, month: Month) => `${table}_${formatMonth(month).replace('-', '_')}`;

export interface PartitionedTable {
  table: string;
  /** The timestamp column it is partitioned on. */
  column: string;
}

export async function partitionedTables(db: ClientBase): Promise<PartitionedTable[]> {
  const { rows } = await db.query<PartitionedTable>(
    `SELECT c.relname AS table, a.attname AS column
       FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
      WHERE c.relnamespace = 'public'::regnamespace AND p.partstrat = 'r'
      ORDER BY 1`,
  );
  return rows;
}

/** The month partitions attached to a table, by month. */
export async function monthPartitions(db: ClientBase, table: string): Promise<Array<{ name: string; month: Month }>> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [table],
  );
  const pattern = new RegExp(`^${table}_(\\d{4})_(\\d{2})$`);
  return rows.flatMap(({ name }) => {
    const match = pattern.exec(name);
    return match ? [{ name, month: parseMonth(`${match[1]}-${match[2]}`)! }] : [];
  });
}

export interface CreatedPartition {
  table: string;
  partition: string;
  /** Rows of its month that had landed in the DEFAULT partition, moved into it. */
  moved: number;
}

/**
 * Creates the partitions of the current month and the MONTHS_AHEAD after it, and of every month with rows in a
 * DEFAULT partition, on every partitioned table; an existing partition is left alone, so it can run any time, in
 * any number of processes. `now` is the clock (tests move it).
 */
export async function ensurePartitions(db: ClientBase, now: Date = new Date()): Promise<CreatedPartition[]> {
  const created: CreatedPartition[] = [];
  const current = monthOf(now);
  const coming = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => addMonths(current, i));
  for (const { table, column } of await partitionedTables(db)) {
    const { rows } = await db.query<{ month: Date }>(
      `SELECT DISTINCT date_trunc('month', ${column} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month FROM ${table}_default`,
    );
    const months = new Map([...coming, ...rows.map((r) => r.month)].map((month) => [partitionName(table, month), month]));
    const existing = new Set((await monthPartitions(db, table)).map((p) => p.name));
    for (const [name, month] of months) {
      if (existing.has(name)) continue;
      const made = await createMonth(db, { table, column }, name, month);
      if (made) created.push(made);
    }
  }
  return created;
}

/**
 * One month's partition, with the rows of that month taken out of DEFAULT first: Postgres refuses to create a
 * partition whose rows sit in DEFAULT. The table's lock keeps new rows of that month from landing there meanwhile.
 * Null when another process made it first.
 */
async function createMonth(
  db: ClientBase,
  { table, column }: PartitionedTable,
  name: string,
  month: Month,
): Promise<CreatedPartition | null> {
  const lower = month.toISOString();
  const upper = addMonths(month, 1).toISOString();
  return withPartitionLocks(db, table, async () => {
    const { rows } = await db.query<{ made: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS made`, [name]);
    if (rows[0].made) return null;
    await db.query(`CREATE TEMP TABLE partition_rows (LIKE ${table}) ON COMMIT DROP`);
    const { rowCount } = await db.query(
      `WITH moved AS (DELETE FROM ${table}_default WHERE ${column} >= $1 AND ${column} < $2 RETURNING *)
       INSERT INTO partition_rows SELECT * FROM moved`,
      [lower, upper],
    );
    await db.query(`CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES FROM ('${lower}') TO ('${upper}')`);
    await db.query(`INSERT INTO ${table} SELECT * FROM partition_rows`);
    return { table, partition: name, moved: rowCount ?? 0 };
  });
}

/**
 * Runs `work` in a transaction holding the locks partition DDL takes, taken first and in one order: the tables the
 * table's foreign keys reference (SHARE ROW EXCLUSIVE: creating or detaching a partition adds or drops its copies of
 * those keys), then the table itself. Taken one by one as the DDL reached them, they would be taken in the reverse of
 * a money transaction's order (an entry, then its postings, then the balances), which can deadlock. A lock not had in
 * time is tried again a few times, then the error is the caller's.
 */
async function withPartitionLocks<T>(db: ClientBase, table: string, work: () => Promise<T>): Promise<T> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT DISTINCT confrelid::regclass::text AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f' ORDER BY 1`,
    [table],
  );
  for (let attempt = 1; ; attempt++) {
    await db.query('BEGIN');
    try {
      await db.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      if (rows.length > 0) await db.query(`LOCK TABLE ${rows.map((r) => r.name).join(', ')} IN SHARE ROW EXCLUSIVE MODE`);
      await db.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const result = await work();
      await db.query('COMMIT');
      return result;
    } catch (error) {
      await db.query('ROLLBACK');
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || attempt === LOCK_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
    }
  }
}

const LOCK_NOT_AVAILABLE = '55P03';

export interface DetachedPartition {
  table: string;
  /** Where it now is, schema-qualified. */
  partition: string;
  month: string;
}

/**
 * Detaches every month partition of `table` before `before` into schema `archive`, in one transaction with
 * `beforeDetach` (given the partitions' names), so that what they held is accounted for exactly when they leave.
 * Plain DETACH: CONCURRENTLY is refused on a table with a DEFAULT partition, and cannot share a transaction.
 */
export async function detachMonthsBefore(
  db: ClientBase,
  table: string,
  before: Month,
  beforeDetach?: (db: ClientBase, partitions: string[]) => Promise<void>,
): Promise<DetachedPartition[]> {
  const old = await withPartitionLocks(db, table, async () => {
    const months = (await monthPartitions(db, table)).filter((p) => p.month < before);
    if (months.length > 0)
      await beforeDetach?.(
        db,
        months.map((p) => p.name),
      );
    for (const { name } of months) {
      await db.query(`ALTER TABLE ${table} DETACH PARTITION ${name}`);
      await db.query(`ALTER TABLE ${name} SET SCHEMA archive`);
    }
    return months;
  });
  return old.map(({ name, month }) => ({ table, partition: `archive.${name}`, month: formatMonth(month) }));
}
