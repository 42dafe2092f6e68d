import PDFDocument from 'pdfkit';
import type { Writable } from 'node:stream';
import type Decimal from 'decimal.js';
import { displayAmount, displayTime, roundingNote, StatementHeader, StatementRows, StatementTotals } from './statement.types';
import { drained, tick, unlessClosed } from './stream-flow';

export interface PdfOptions {
  /** Deflate page content streams (the default). Off only to make the text easy to inspect. */
  compress?: boolean;
}

const MARGIN = 30;
const FONT_SIZE = 7;
const ROW_HEIGHT = 10;
const LINE_HEIGHT = 13;
const REGULAR = 'Courier';
const BOLD = 'Courier-Bold';
/** A4 landscape, in points. */
const PAGE = { width: 841.89, height: 595.28 };

/**
 * The table in characters of a monospaced font: every glyph of Courier is 0.6 em wide, so a row is one padded
 * line placed with a single text call (no measuring, no line wrapper), which is what keeps long statements fast.
 * 185 characters at 7 pt are 777 pt, inside a landscape A4 page (842 pt) with 30 pt margins.
 */
const COLUMNS = [
  { title: 'Date (UTC)', width: 19, align: 'left' },
  { title: 'Transaction ID', width: 36, align: 'left' },
  { title: 'Reference', width: 20, align: 'left' },
  { title: 'Narration', width: 34, align: 'left' },
  { title: 'Source', width: 19, align: 'left' },
  { title: 'Debit', width: 16, align: 'right' },
  { title: 'Credit', width: 16, align: 'right' },
  { title: 'Balance', width: 18, align: 'right' },
] as const;

/**
 * A fixed layout, so the number of pages is known from the number of rows before anything is drawn ("Page X of N"
 * without holding pages in memory): the first page has the header block, every page the table head and the
 * footer, and the summary after the last row takes SUMMARY_SLOTS rows' worth of space (a page of its own when it
 * does not fit under the last row).
 */
const HEADER_LINES = 11;
const FIRST_TABLE_TOP = MARGIN + 24 + HEADER_LINES * LINE_HEIGHT + 8;
const TABLE_BOTTOM = PAGE.height - MARGIN - ROW_HEIGHT * 2; // the footer lives below
const HEAD_HEIGHT = ROW_HEIGHT + 2;
const rowsFrom = (top: number) => Math.floor((TABLE_BOTTOM - top - HEAD_HEIGHT) / ROW_HEIGHT);
export const PDF_LAYOUT = { firstPageRows: rowsFrom(FIRST_TABLE_TOP), pageRows: rowsFrom(MARGIN), summarySlots: 11 };

/** Pages a statement of `rowCount` rows takes with PDF_LAYOUT. */
export function pdfPageCount(rowCount: number): number {
  const { firstPageRows, pageRows, summarySlots } = PDF_LAYOUT;
  let pages = 1;
  let capacity = firstPageRows;
  let used = rowCount;
  if (rowCount > firstPageRows) {
    const later = Math.ceil((rowCount - firstPageRows) / pageRows);
    pages += later;
    capacity = pageRows;
    used = rowCount - firstPageRows - (later - 1) * pageRows;
  }
  return used + summarySlots > capacity ? pages + 1 : pages;
}

/**
 * Streams a PDF statement with pdfkit. Pages are not buffered (each is flushed when the next begins) and the
 * generator waits for `out` to drain after every batch of rows, so memory stays flat however long the
 * statement is. Every page shows the issuer and "Page X of N", N computed up front from header.rowCount.
 */
export async function writePdfStatement(
  header: StatementHeader,
  rows: StatementRows,
  out: Writable,
  options: PdfOptions = {},
): Promise<void> {
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: MARGIN,
    compress: options.compress ?? true,
    bufferPages: false,
    info: {
      Title: `Statement ${header.accountNumber}`,
      Author: printable(header.issuerName),
      Subject: `Account statement ${displayTime(header.from)} to ${displayTime(header.to)} UTC`,
      CreationDate: header.generatedAt,
    },
  });
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  doc.on('data', (chunk: Buffer) => {
    if (!out.destroyed) out.write(chunk);
  });

  const money = (value: Decimal.Value) => displayAmount(value, header.currency);
  const withCurrency = (value: Decimal.Value) => `${money(value)} ${header.currency}`;
  let pages = header.rowCount === null ? null : pdfPageCount(header.rowCount);
  let page = 1;
  let capacity = PDF_LAYOUT.firstPageRows;
  let rowsOnPage = 0;
  let y = MARGIN;

  const text = (value: string, x = MARGIN) => doc.text(value, x, y, { lineBreak: false });
  const tableHead = () => {
    doc.font(BOLD).fontSize(FONT_SIZE);
    text(tableLine(COLUMNS.map((c) => c.title)));
    doc
      .moveTo(MARGIN, y + ROW_HEIGHT - 2)
      .lineTo(PAGE.width - MARGIN, y + ROW_HEIGHT - 2)
      .lineWidth(0.5)
      .stroke();
    doc.font(REGULAR);
    y += HEAD_HEIGHT;
  };
  const footer = () => {
    doc.font(REGULAR).fontSize(FONT_SIZE);
    const footerY = PAGE.height - MARGIN - FONT_SIZE;
    doc.text(printable(`${header.issuerName} - account statement ${header.accountNumber}`), MARGIN, footerY, { lineBreak: false });
    pages = pages === null ? null : Math.max(pages, page); // never "Page 5 of 4", should the count ever be short
    const label = pages === null ? `Page ${page}` : `Page ${page} of ${pages}`;
    doc.text(label, PAGE.width - MARGIN - label.length * FONT_SIZE * 0.6, footerY, { lineBreak: false });
  };
  const newPage = () => {
    footer();
    doc.addPage();
    page++;
    capacity = PDF_LAYOUT.pageRows;
    rowsOnPage = 0;
    y = MARGIN;
    tableHead();
  };
  const line = (label: string, value: string) => {
    doc.font(BOLD).fontSize(9);
    text(label);
    doc.font(REGULAR);
    text(printable(value), MARGIN + 130);
    y += LINE_HEIGHT;
  };

  // Header block: HEADER_LINES lines.
  doc.font(BOLD).fontSize(15);
  text(printable(`${header.issuerName} - Account statement`));
  y += 24;
  line('Account number', header.accountNumber);
  line('Account name', header.accountName);
  line('Currency', header.currency);
  line('Account holder', header.ownerName);
  line('Client', header.clientName);
  line('Period', `${displayTime(header.from)} to ${displayTime(header.to)} UTC`);
  line('Generated at', `${displayTime(header.generatedAt)} UTC`);
  line('Opening balance', withCurrency(header.openingBalance));
  line('Issued by', header.issuerName);
  doc.font(REGULAR).fontSize(FONT_SIZE);
  text(roundingNote(header.currency));
  y = FIRST_TABLE_TOP;
  tableHead();

  const totals = new StatementTotals(header.openingBalance);
  for (;;) {
    const batch = await rows.next();
    if (batch.length === 0) break;
    for (const row of batch) {
      if (rowsOnPage === capacity) newPage();
      const { debit, credit } = totals.add(row);
      text(
        tableLine([
          displayTime(row.bookedAt),
          row.transactionId ?? '',
          printable(row.reference ?? ''),
          printable(row.narration),
          row.source,
          debit ? money(debit) : '',
          credit ? money(credit) : '',
          money(row.balanceAfter),
        ]),
      );
      y += ROW_HEIGHT;
      rowsOnPage++;
    }
    await tick(); // let pdfkit hand what it produced to `out` before judging whether `out` is full
    await drained(out);
  }

  // Totals and closing balance.
  if (rowsOnPage + PDF_LAYOUT.summarySlots > capacity) newPage();
  doc
    .moveTo(MARGIN, y)
    .lineTo(PAGE.width - MARGIN, y)
    .lineWidth(0.5)
    .stroke();
  y += 4;
  doc.font(BOLD).fontSize(FONT_SIZE);
  text(tableLine(['Totals', '', '', '', '', money(totals.debits), money(totals.credits), '']));
  y += ROW_HEIGHT * 2;
  line('Opening balance', withCurrency(header.openingBalance));
  line('Total debits', withCurrency(totals.debits));
  line('Total credits', withCurrency(totals.credits));
  line('Closing balance', withCurrency(totals.closing));
  line('Lines', String(totals.rows));
  footer();

  doc.end();
  await unlessClosed(out, ended);
  out.end();
  await unlessClosed(out, new Promise<void>((resolve) => out.once('finish', resolve)));
}

/** One table line: each value padded (or, for text, cut with an ellipsis) to its column. */
function tableLine(values: string[]): string {
  return COLUMNS.map((column, i) => {
    const value = values[i];
    if (column.align === 'right') return value.padStart(column.width);
    return value.length > column.width ? `${value.slice(0, column.width - 1)}…` : value.padEnd(column.width);
  })
    .join(' ')
    .trimEnd();
}

/** The standard PDF fonts speak WinAnsi: characters outside Latin-1 are shown as "?". */
function printable(value: string): string {
  return value.replace(/[^\x20-\x7e\xa0-\xff…]/g, '?');
}
