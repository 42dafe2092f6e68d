/**
 * One client's records listed newest first, filtered and paged by keyset (created_at, id): a page starts after the
 * last row of the previous one, so rows inserted meanwhile never shift or repeat a page, and an export walks the
 * whole filtered list page by page without holding it in memory.
 */
export interface ListFilter {
  status?: string;
  /** Inclusive dates, YYYY-MM-DD, in `timeZone` (UTC when absent). */
  from?: string;
  to?: string;
  /** The IANA time zone the dates are days of (the merchant's). */
  timeZone?: string;
  /** What the merchant searches by: a reference's start, a phone number (or part of one), or an exact amount. */
  search?: string;
}

/** Where a page starts: the position (created_at as Postgres text, exact to the microsecond) and id of the last row before it. */
export interface Keyset {
  at: string;
  id: string;
}

/** A page of the list: the rows after `after` (older), or the rows before `before` (newer), never both. */
export interface ListQuery {
  filter: ListFilter;
  after: Keyset | null;
  before?: Keyset | null;
  limit: number;
}

/** How a list's table answers the filter: its columns (expressions over the FROM of `list`). */
export interface ListColumns {
  createdAt: string;
  id: string;
  idType: 'bigint' | 'uuid';
  status: string;
  reference: string;
  /** Phone numbers a search matches anywhere in (digits, as stored). */
  phones?: string[];
  /** Amounts a search matches exactly. */
  amounts?: string[];
}

/** A list query's table and select list: `SELECT ${select} FROM ${from}`, where `from` has `client_id = $1` in its WHERE. */
export interface ListSource {
  select: string;
  from: string;
  columns: ListColumns;
}

const AMOUNT = /^\d{1,15}(\.\d{1,4})?$/;
const PHONE = /^\+?\d{3,15}$/;

/** The filter's conditions (each to follow `client_id = $1` with AND), its values numbered by `param`. */
function conditionsOf(filter: ListFilter, c: ListColumns, param: (value: unknown) => string): string[] {
  const conditions: string[] = [];
  const { status, from, to, search } = filter;
  const zone = () => param(filter.timeZone ?? 'UTC');
  if (status) conditions.push(`${c.status}::text = ${param(status)}`);
  if (from) conditions.push(`${c.createdAt} >= ${param(from)}::timestamp AT TIME ZONE ${zone()}`);
  if (to) conditions.push(`${c.createdAt} < (${param(to)}::date + 1)::timestamp AT TIME ZONE ${zone()}`);
  if (search) {
    const text = search.trim();
    const compact = text.replace(/[\s,]/g, '');
    const any = [`${c.reference} LIKE ${param(text.replace(/[\\%_]/g, (ch) => `\\${ch}`) + '%')}`];
    if (PHONE.test(compact) && c.phones?.length) {
      const digits = param(`%${compact.replace('+', '')}%`);
      any.push(...c.phones.map((phone) => `${phone} LIKE ${digits}`));
    }
    if (AMOUNT.test(compact) && c.amounts?.length) {
      const amount = param(compact);
      any.push(...c.amounts.map((column) => `${column} = ${amount}::numeric`));
    }
    conditions.push(`(${any.join(' OR ')})`);
  }
  return conditions;
}

/** The list's query: filtered, newest first, from a keyset position either way (a `before` page is read oldest first). */
export function listSql(query: ListQuery, source: ListSource): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value) + 1}`;
  const c = source.columns;
  const conditions = conditionsOf(query.filter, c, param);
  const position = (at: Keyset) => `(${param(at.at)}::timestamptz, ${param(at.id)}::${c.idType})`;
  let order = 'DESC';
  if (query.after) conditions.push(`(${c.createdAt}, ${c.id}) < ${position(query.after)}`);
  else if (query.before) {
    conditions.push(`(${c.createdAt}, ${c.id}) > ${position(query.before)}`);
    order = 'ASC';
  }
  const where = conditions.map((condition) => ` AND ${condition}`).join('');
  return {
    text: `SELECT ${source.select} FROM ${source.from}${where} ORDER BY ${c.createdAt} ${order}, ${c.id} ${order} LIMIT ${param(query.limit)}`,
    params,
  };
}

/** How many rows the filter matches, and how many of them are newer than `first` (the first row of the page shown). */
export function countSql(filter: ListFilter, source: ListSource, first: Keyset | null): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value) + 1}`;
  const c = source.columns;
  const where = conditionsOf(filter, c, param)
    .map((condition) => ` AND ${condition}`)
    .join('');
  const newer = first
    ? `count(*) FILTER (WHERE (${c.createdAt}, ${c.id}) > (${param(first.at)}::timestamptz, ${param(first.id)}::${c.idType}))::int`
    : '0';
  return { text: `SELECT count(*)::int AS total, ${newer} AS newer FROM ${source.from}${where}`, params };
}

/** How many rows a filter matches, and how many come before the page shown. */
export interface ListCount {
  total: number;
  newer: number;
}

/** What runs a query: an EntityManager or a DataSource. */
interface Queryable {
  query(text: string, params: unknown[]): Promise<unknown>;
}

/** A page of the client's list (listSql). */
export function listRows<T>(db: Queryable, clientId: string, query: ListQuery, source: ListSource): Promise<T[]> {
  const { text, params } = listSql(query, source);
  return db.query(text, [clientId, ...params]) as Promise<T[]>;
}

/** The client's rows the filter matches, and how many are newer than `first` (countSql). */
export async function countRows(
  db: Queryable,
  clientId: string,
  filter: ListFilter,
  source: ListSource,
  first: Keyset | null,
): Promise<ListCount> {
  const { text, params } = countSql(filter, source, first);
  const [row] = (await db.query(text, [clientId, ...params])) as ListCount[];
  return row;
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

/** One currency's records of one day in the merchant's time zone (the portal's overview). */
export interface DayTotals {
  /** YYYY-MM-DD in the time zone asked for. */
  day: string;
  currency: string;
  count: number;
  successful: number;
  successful_amount: string;
}

/**
 * The client's ($1) records per day of the last $3 days (today included) in time zone $2, per currency: how many,
 * how many succeeded (`status` is the domain's `successful` code) and their amount. Days without records are absent.
 */
export function dailyTotalsSql(table: 'payments' | 'payouts', amount: string, status: string, successful: number): string {
  return `SELECT (created_at AT TIME ZONE $2)::date::text AS day, currency, count(*)::int AS count,
      (count(*) FILTER (WHERE ${status} = ${successful}))::int AS successful,
      coalesce(sum(${amount}) FILTER (WHERE ${status} = ${successful}), 0) AS successful_amount
    FROM ${table}
    WHERE client_id = $1 AND created_at >= ((now() AT TIME ZONE $2)::date - ($3::int - 1))::timestamp AT TIME ZONE $2
    GROUP BY 1, 2 ORDER BY 1, 2`;
}
