import { BadRequestException } from '@nestjs/common';

export const DEFAULT_PAGE = 1;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

/**
 * page and limit come from the query string or, as the wallet document's examples send them, from a JSON body
 * on the GET. The query string wins when both are present.
 */
export function readPage(query: Record<string, unknown>, body: unknown): Page {
  const fromBody = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const page = positiveInt('page', query.page ?? fromBody.page, DEFAULT_PAGE, Number.MAX_SAFE_INTEGER);
  const limit = positiveInt('limit', query.limit ?? fromBody.limit, DEFAULT_LIMIT, MAX_LIMIT);
  return { page, limit, offset: (page - 1) * limit };
}

function positiveInt(name: string, raw: unknown, fallback: number, max: number): number {
  if (raw === undefined || raw === null || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 1) throw new BadRequestException([`${name} must be a positive integer`]);
  if (value > max) throw new BadRequestException([`${name} must not be greater than ${max}`]);
  return value;
}

export interface ListEnvelope<T> {
  metadata: { page: number; per_page: number; total_count: number };
  statistics: Array<{ name: string; count: number }>;
  records: T[];
}

export function envelope<T>(page: Page, totalCount: number, statistics: ListEnvelope<T>['statistics'], records: T[]): ListEnvelope<T> {
  return { metadata: { page: page.page, per_page: page.limit, total_count: totalCount }, statistics, records };
}
