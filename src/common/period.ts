import { BadRequestException } from '@nestjs/common';

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const DAY_MS = 86_400_000;

/** An instant a client named by an ISO 8601 date or date-time. */
export interface NamedInstant {
  at: Date;
  /** A bare date ("2025-01-31"): as an end, it includes that whole day. */
  dateOnly: boolean;
}

/**
 * Parses an ISO 8601 date or date-time; a date-time without an offset is UTC, a bare date is that day's UTC midnight.
 * Null for anything else, including dates the calendar does not have (2025-02-30, which `Date` would roll over).
 */
export function parseInstant(value: string): NamedInstant | null {
  const match = ISO_8601.exec(value);
  if (!match) return null;
  const [, year, month, day, zone] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCFullYear() !== Number(year) || calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) {
    return null;
  }
  const dateOnly = value.length === 10;
  // Date reads neither a missing offset as UTC nor an offset of hours alone ("+03"), which ISO 8601 allows.
  const at = new Date(dateOnly ? `${value}T00:00:00.000Z` : !zone ? `${value}Z` : zone.length === 3 ? `${value}:00` : value);
  return Number.isNaN(at.getTime()) ? null : { at, dateOnly };
}

/** A period both of whose ends are inclusive, as a person reads it. */
export interface Period {
  from: Date;
  /** Inclusive end, as shown on a statement. */
  to: Date;
  /** Exclusive bound, for queries: the next day after a bare end date, the next millisecond after a date-time. */
  until: Date;
}

/** start_date and end_date, both required and inclusive (statements); 400 naming the field otherwise. */
export function parsePeriod(start: string, end: string): Period {
  const from = required('start_date', start).at;
  const until = exclusiveEnd(required('end_date', end));
  const to = new Date(until.getTime() - 1);
  if (to < from) throw new BadRequestException(['end_date must not be before start_date']);
  return { from, to, until };
}

/** The same rules with either end left open (history filters); a missing or empty value is no bound. */
export function parseOptionalPeriod(start: string | undefined, end: string | undefined): { from: Date | null; until: Date | null } {
  const from = start ? required('start_date', start).at : null;
  const until = end ? exclusiveEnd(required('end_date', end)) : null;
  if (from && until && until.getTime() - 1 < from.getTime()) throw new BadRequestException(['end_date must not be before start_date']);
  return { from, until };
}

function required(name: string, value: string): NamedInstant {
  const instant = parseInstant(value);
  if (!instant) throw new BadRequestException([`${name} must be an ISO 8601 date or date-time`]);
  return instant;
}

function exclusiveEnd(end: NamedInstant): Date {
  return new Date(end.at.getTime() + (end.dateOnly ? DAY_MS : 1));
}
