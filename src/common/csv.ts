import { Readable } from 'node:stream';

/** A value a spreadsheet must keep as text (ids, references, phone and account numbers): see csvCell. */
export class TextCell {
  constructor(readonly text: string) {}
}

export function textCell(value: string | null): TextCell | null {
  return value === null ? null : new TextCell(value);
}

/** Text a spreadsheet would read as a number or a date (254712345678 → 2.54712E+11, 0012 → 12, 2026-01-02). */
const NUMBER_LIKE = /^[\d\s+\-.,:/eE]*\d[\d\s+\-.,:/eE]*$/;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled. Text a spreadsheet
 * would run as a formula (starting with = + - @, or a tab or carriage return before one) gets a leading apostrophe.
 * A TextCell a spreadsheet would read as a number or date is written as the formula ="…", which every spreadsheet
 * shows as that exact text (the value holds only digits and separators, so nothing in it can run).
 */
export function csvCell(value: unknown): string {
  if (value instanceof TextCell && NUMBER_LIKE.test(value.text)) return `"=""${value.text}"""`;
  let text =
    value === null || value === undefined
      ? ''
      : value instanceof TextCell
        ? value.text
        : value instanceof Date
          ? value.toISOString()
          : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: unknown[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** A CSV document streamed as the rows arrive: the header line, then one line per row. */
export function csvStream<T>(header: string[], rows: AsyncIterable<T>, cells: (row: T) => unknown[]): Readable {
  return Readable.from(
    (async function* () {
      yield csvLine(header);
      for await (const row of rows) yield csvLine(cells(row));
    })(),
  );
}
