import { Readable } from 'node:stream';

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled. Text a spreadsheet
 * would run as a formula (starting with = + - @, or a tab or carriage return before one) gets a leading apostrophe.
 */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : String(value);
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
