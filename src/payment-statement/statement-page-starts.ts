import type { Keyset } from '../common/listing';

/** A period's page starts are kept this long after they were last written or read. */
const KEEP_MS = 10 * 60_000;
/** At most this many page starts (a few hundred bytes each) are kept; the least recently used go first. */
const CAPACITY = 10_000;

/**
 * Where the pages of a payment statement start, learnt from the pages already served. Merchants page the statement
 * by offset and limit (collection document §4), and OFFSET makes Postgres read and discard every row before the
 * page, so the last page of a long period cost a hundred times the first. After a full page at offset o, the row
 * at offset o + limit − 1 is known; a request for offset o + limit (the next page) then seeks past that row in the
 * (client_id, created_at, id) index instead of counting rows, and costs the same at any depth.
 *
 * The same position means the same rows as OFFSET as long as no payment of the period was created before that row
 * in between; one that was (a charge whose transaction committed after the page was read) is not shown again
 * under a shifted offset, where OFFSET would have repeated the row before it. An offset nobody reached by paging
 * (or one that this process has not served) is counted by OFFSET as before.
 */
export class StatementPageStarts {
  private readonly starts = new Map<string, { after: Keyset; until: number }>();

  /** The last row before `offset`, when a page ending there was served recently. */
  get(period: StatementPeriod, offset: number, now = Date.now()): Keyset | null {
    const key = pageKey(period, offset);
    const start = this.starts.get(key);
    if (!start) return null;
    this.starts.delete(key);
    if (start.until < now) return null;
    this.starts.set(key, { after: start.after, until: now + KEEP_MS }); // most recently used last
    return start.after;
  }

  /** Records that the page at `offset` starts after `after` (the last row of the page before it). */
  set(period: StatementPeriod, offset: number, after: Keyset, now = Date.now()): void {
    const key = pageKey(period, offset);
    this.starts.delete(key);
    this.starts.set(key, { after, until: now + KEEP_MS });
    if (this.starts.size > CAPACITY) this.starts.delete(this.starts.keys().next().value!);
  }
}

/** One client's statement period, as the request named it. */
export interface StatementPeriod {
  clientId: string;
  start: Date;
  end: Date;
}

function pageKey({ clientId, start, end }: StatementPeriod, offset: number): string {
  return `${clientId} ${start.getTime()} ${end.getTime()} ${offset}`;
}
