/**
 * One client's records listed newest first, filtered and paged by keyset (created_at, id): a page starts after the
 * last row of the previous one, so rows inserted meanwhile never shift or repeat a page, and an export walks the
 * whole filtered list page by page without holding it in memory.
 */
export interface ListFilter {
  status?: string;
  /** Inclusive UTC dates, YYYY-MM-DD. */
  from?: string;
  to?: string;
  /** Matches references starting with it. */
  reference?: string;
}

/** Where a page starts: the position (created_at as Postgres text, exact to the microsecond) and id of the last row before it. */
export interface Keyset {
  at: string;
  id: string;
}

export interface ListQuery {
  filter: ListFilter;
  after: Keyset | null;
  limit: number;
}

export interface ListColumns {
  createdAt: string;
  id: string;
  idType: 'bigint' | 'uuid';
  status: string;
  reference: string;
}

/**
 * The WHERE conditions (joined with AND, to follow `client_id = $1`), the ORDER BY and LIMIT of a list query, with
 * their parameters numbered from $2. Every value is a parameter.
 */
export function listClauses(query: ListQuery, c: ListColumns): { where: string; tail: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value) + 1}`;
  const conditions: string[] = [];
  const { status, from, to, reference } = query.filter;
  if (status) conditions.push(`${c.status}::text = ${param(status)}`);
  if (from) conditions.push(`${c.createdAt} >= ${param(from)}::timestamp AT TIME ZONE 'UTC'`);
  if (to) conditions.push(`${c.createdAt} < (${param(to)}::date + 1)::timestamp AT TIME ZONE 'UTC'`);
  if (reference) conditions.push(`${c.reference} LIKE ${param(reference.replace(/[\\%_]/g, (ch) => `\\${ch}`) + '%')}`);
  if (query.after)
    conditions.push(`(${c.createdAt}, ${c.id}) < (${param(query.after.at)}::timestamptz, ${param(query.after.id)}::${c.idType})`);
  return {
    where: conditions.map((condition) => ` AND ${condition}`).join(''),
    tail: `ORDER BY ${c.createdAt} DESC, ${c.id} DESC LIMIT ${param(query.limit)}`,
    params,
  };
}

/** Every row of the filtered list, fetched a page at a time (for exports). */
export async function* everyRow<T extends { position_at: string; id: string }>(
  query: Omit<ListQuery, 'after' | 'limit'>,
  page: (q: ListQuery) => Promise<T[]>,
  pageSize = 500,
): AsyncGenerator<T> {
  let after: Keyset | null = null;
  for (;;) {
    const rows = await page({ ...query, after, limit: pageSize });
    yield* rows;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1];
    after = { at: last.position_at, id: String(last.id) };
  }
}

/** One currency's records of a day (the portal's overview). */
export interface DayTotals {
  currency: string;
  count: number;
  successful: number;
  successful_amount: string;
}

/** Today's (UTC) records of the client ($1) per currency: how many, how many succeeded (700) and their amount. */
export function todaysTotalsSql(table: 'payments' | 'payouts', amount: string, status: string): string {
  return `SELECT currency, count(*)::int AS count, (count(*) FILTER (WHERE ${status} = 700))::int AS successful,
      coalesce(sum(${amount}) FILTER (WHERE ${status} = 700), 0) AS successful_amount
    FROM ${table} WHERE client_id = $1 AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    GROUP BY currency ORDER BY currency`;
}
