import { BadRequestException } from '@nestjs/common';
import type { Keyset, ListCount, ListFilter } from '../common/listing';
import type { ListPage } from './views/pages';

export const PAGE_SIZE = 50;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const POSITION = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;
const ID = /^(\d{1,19}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

function text(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequestException(`${name} must be given once`);
  return value;
}

function date(query: Record<string, unknown>, name: string): string | undefined {
  const value = text(query, name);
  if (value === undefined) return undefined;
  if (!DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw new BadRequestException(`${name} must be a date (YYYY-MM-DD)`);
  return value;
}

/**
 * A list page's filter from the query string: status among `statuses`, from/to dates (days of the merchant's time
 * zone) and the search box `q` (a reference's start, a phone number or an amount).
 */
export function readFilter(query: Record<string, unknown>, statuses: Record<string, string>, timeZone: string): ListFilter {
  const status = text(query, 'status');
  if (status !== undefined && !(status in statuses)) throw new BadRequestException('Unknown status');
  const search = text(query, 'q')?.trim();
  if (search !== undefined && search.length > 64) throw new BadRequestException('A search has at most 64 characters');
  return { status, from: date(query, 'from'), to: date(query, 'to'), search: search || undefined, timeZone };
}

/** Where the page starts: the opaque cursor of an "Older" (`after`) or "Newer" (`before`) link; at most one. */
export function readCursor(query: Record<string, unknown>): { after: Keyset | null; before: Keyset | null } {
  const after = readKeyset(query, 'after');
  const before = readKeyset(query, 'before');
  if (after && before) throw new BadRequestException('This page link is not valid');
  return { after, before };
}

function readKeyset(query: Record<string, unknown>, name: 'after' | 'before'): Keyset | null {
  const raw = text(query, name);
  if (raw === undefined) return null;
  let after: unknown;
  try {
    after = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    after = null;
  }
  const { at, id } = (after ?? {}) as Record<string, unknown>;
  if (typeof at !== 'string' || typeof id !== 'string' || !POSITION.test(at) || !ID.test(id))
    throw new BadRequestException('This page link is not valid');
  return { at, id };
}

const cursorOf = (row: { position_at: string; id: string }) =>
  Buffer.from(JSON.stringify({ at: row.position_at, id: String(row.id) })).toString('base64url');

/**
 * A page of PAGE_SIZE rows from PAGE_SIZE + 1 fetched (newest first; read oldest first when it was asked `before` a
 * row), with the cursors of the pages on either side: an older page exists when one more row was fetched or when it
 * was reached going back, a newer one when rows are newer than its first (`count.newer`).
 */
export function toPage<T extends { position_at: string; id: string }>(
  fetched: T[],
  cursor: { after: Keyset | null; before: Keyset | null },
  count: ListCount,
): ListPage<T> {
  const more = fetched.length > PAGE_SIZE;
  const rows = cursor.before ? fetched.slice(0, PAGE_SIZE).reverse() : fetched.slice(0, PAGE_SIZE);
  const hasOlder = cursor.before ? rows.length > 0 : more;
  return {
    rows,
    older: hasOlder && rows.length > 0 ? cursorOf(rows[rows.length - 1]) : null,
    newer: count.newer > 0 && rows.length > 0 ? cursorOf(rows[0]) : null,
    count,
  };
}

/** The first row a page will show, for counting the rows before it: the row after the cursor, found by the list itself. */
export function firstRow<T extends { position_at: string; id: string }>(fetched: T[], before: boolean): Keyset | null {
  const first = before ? fetched[Math.min(fetched.length, PAGE_SIZE) - 1] : fetched[0];
  return first ? { at: first.position_at, id: String(first.id) } : null;
}
