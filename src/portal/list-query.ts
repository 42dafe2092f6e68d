import { BadRequestException } from '@nestjs/common';
import type { Keyset, ListFilter } from '../common/listing';

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

/** A list page's filter (status among `statuses`, from/to dates, reference prefix) from the query string. */
export function readFilter(query: Record<string, unknown>, statuses: Record<string, string>): ListFilter {
  const status = text(query, 'status');
  if (status !== undefined && !(status in statuses)) throw new BadRequestException('Unknown status');
  const reference = text(query, 'reference');
  if (reference !== undefined && reference.length > 64) throw new BadRequestException('A reference has at most 64 characters');
  return { status, from: date(query, 'from'), to: date(query, 'to'), reference };
}

/** Where the page starts: the opaque `after` cursor of the previous page's "Older" link. */
export function readAfter(query: Record<string, unknown>): Keyset | null {
  const raw = text(query, 'after');
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

/** A page of PAGE_SIZE rows from PAGE_SIZE + 1 fetched, with the cursor of the next page when there is one. */
export function toPage<T extends { position_at: string; id: string }>(fetched: T[]): { rows: T[]; next: string | null } {
  const rows = fetched.slice(0, PAGE_SIZE);
  if (fetched.length <= PAGE_SIZE) return { rows, next: null };
  const last = rows[rows.length - 1];
  return { rows, next: Buffer.from(JSON.stringify({ at: last.position_at, id: String(last.id) })).toString('base64url') };
}
