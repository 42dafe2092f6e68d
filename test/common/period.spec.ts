import { BadRequestException } from '@nestjs/common';
import fc from 'fast-check';
import { parseInstant, parseOptionalPeriod, parsePeriod } from '../../src/common/period';

/** Periods of statements and history (start_date, end_date); pure, no database. */
const iso = (value: string) => parseInstant(value)?.at.toISOString() ?? null;

function badRequest(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return ((error as BadRequestException).getResponse() as { message: string[] }).message;
  }
  throw new Error('expected a 400');
}

describe('parseInstant', () => {
  it.each([
    ['2025-01-31', '2025-01-31T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2025-01-31T14:05', '2025-01-31T14:05:00.000Z'],
    ['2025-01-31T14:05:09', '2025-01-31T14:05:09.000Z'],
    ['2025-01-31T14:05:09.123', '2025-01-31T14:05:09.123Z'],
    ['2025-01-31T14:05:09Z', '2025-01-31T14:05:09.000Z'],
    ['2025-01-31T14:05:09+03:00', '2025-01-31T11:05:09.000Z'],
    ['2025-01-31T14:05:09+0300', '2025-01-31T11:05:09.000Z'],
    ['2025-01-31T01:05:09-05', '2025-01-31T06:05:09.000Z'],
  ])('%s is %s (no offset means UTC, whatever the server zone)', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it('tells a bare date from a date-time', () => {
    expect(parseInstant('2025-01-31')?.dateOnly).toBe(true);
    expect(parseInstant('2025-01-31T00:00:00Z')?.dateOnly).toBe(false);
  });

  it.each([
    '',
    'yesterday',
    '1', // Date reads 2001-01-01
    '2025-02-29', // not a leap year; Date rolls it over to 1 March
    '2025-02-30',
    '2025-04-31',
    '2025-13-01',
    '2025-00-10',
    '2025-1-5',
    '2025-01-31 14:05:09', // a space instead of T
    '2025-01-31T25:00:00Z',
    '31/01/2025',
    'Jan 31 2025',
    '2025-01-31T14:05:09+03:00 ',
  ])('%j is not an ISO 8601 date or date-time', (text) => {
    expect(parseInstant(text)).toBeNull();
  });

  it('reads back every instant it printed, and every calendar day', () => {
    const dates = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59.999Z'), noInvalidDate: true });
    fc.assert(
      fc.property(dates, (date) => {
        expect(parseInstant(date.toISOString())?.at.getTime()).toBe(date.getTime());
        const day = date.toISOString().slice(0, 10);
        expect(iso(day)).toBe(`${day}T00:00:00.000Z`);
      }),
    );
  });
});

describe('parsePeriod (statements: both ends required, inclusive)', () => {
  it('a bare end date includes that whole day', () => {
    const period = parsePeriod('2025-01-01', '2025-01-31');
    expect(period.from.toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(period.to.toISOString()).toBe('2025-01-31T23:59:59.999Z');
    expect(period.until.toISOString()).toBe('2025-02-01T00:00:00.000Z');
  });

  it('one bare date as both ends is that day', () => {
    const period = parsePeriod('2025-01-31', '2025-01-31');
    expect(period.until.getTime() - period.from.getTime()).toBe(86_400_000);
  });

  it('a date-time end includes that millisecond and no more', () => {
    const period = parsePeriod('2025-01-01T08:00:00Z', '2025-01-01T17:30:00.250Z');
    expect(period.to.toISOString()).toBe('2025-01-01T17:30:00.250Z');
    expect(period.until.toISOString()).toBe('2025-01-01T17:30:00.251Z');
  });

  it('equal date-times make a one-millisecond period', () => {
    const period = parsePeriod('2025-01-01T08:00:00Z', '2025-01-01T08:00:00Z');
    expect(period.to).toEqual(period.from);
  });

  it('end before start → 400', () => {
    expect(badRequest(() => parsePeriod('2025-02-01', '2025-01-31'))).toEqual(['end_date must not be before start_date']);
    expect(badRequest(() => parsePeriod('2025-01-31T10:00:00Z', '2025-01-31T09:59:59.999Z'))).toEqual([
      'end_date must not be before start_date',
    ]);
  });

  it('names the field that is not a date → 400', () => {
    expect(badRequest(() => parsePeriod('2025-02-30', '2025-03-01'))).toEqual(['start_date must be an ISO 8601 date or date-time']);
    expect(badRequest(() => parsePeriod('2025-01-01', 'soon'))).toEqual(['end_date must be an ISO 8601 date or date-time']);
  });
});

describe('parseOptionalPeriod (history filters: either end may be left open)', () => {
  it('missing or empty ends are no bound', () => {
    expect(parseOptionalPeriod(undefined, undefined)).toEqual({ from: null, until: null });
    expect(parseOptionalPeriod('', '')).toEqual({ from: null, until: null });
  });

  it('applies the same rules as statements to the ends given', () => {
    expect(parseOptionalPeriod('2025-01-01', undefined)).toEqual({ from: new Date('2025-01-01T00:00:00Z'), until: null });
    expect(parseOptionalPeriod(undefined, '2025-01-31')).toEqual({ from: null, until: new Date('2025-02-01T00:00:00Z') });
    const both = parsePeriod('2025-01-01T10:00', '2025-01-05');
    expect(parseOptionalPeriod('2025-01-01T10:00', '2025-01-05')).toEqual({ from: both.from, until: both.until });
  });

  it('end before start, or an end that is no date → 400', () => {
    expect(badRequest(() => parseOptionalPeriod('2025-02-01', '2025-01-31'))).toEqual(['end_date must not be before start_date']);
    expect(badRequest(() => parseOptionalPeriod(undefined, '1'))).toEqual(['end_date must be an ISO 8601 date or date-time']);
  });
});
