import PDFDocument from 'pdfkit';
import type { Writable } from 'node:stream';
import type Decimal from 'decimal.js';
import { displayAmount } from '../common/money';
import { displayTime, roundingNote, StatementHeader, StatementRows, StatementTotals } from './statement.types';
import { drained, tick, unlessClosed } from './stream-flow';

export interface PdfOptions {
  /** Deflate page content streams (the default). Off only to make the text easy to inspect. */
  compress?: boolean;
}

const MARGIN = 30;
const FONT_SIZE = 6.3;
const ROW_HEIGHT = 10;
const LINE_HEIGHT = 13;
const REGULAR = 'Courier';
const BOLD = 'Courier-Bold';
type FontName = typeof REGULAR | typeof BOLD;
/** A4 landscape, in points. */
const PAGE = { width: 841.89, height: 595.28 };

/**
 * The table in characters of a monospaced font: every glyph of Courier is 0.6 em wide, so a row is one padded
 * line placed with a single text call (no measuring, no line wrapper), which is what keeps long statements fast.
 * Columns are two spaces apart (COLUMN_GAP), so that a column filled to its width (a date, a UUID) does not run into
 * the next: 206 characters at 6.3 pt are 779 pt, inside a landscape A4 page (842 pt) with 30 pt margins. The
 * reference is 40 wide so that a UUID with a short prefix ("po-…") is whole; the merchant reconciles by it.
 */
const COLUMN_GAP = '  ';
const COLUMNS = [
  { title: 'Date (UTC)', width: 19, align: 'left' },
  { title: 'Transaction ID', width: 36, align: 'left' },
  { title: 'Reference', width: 40, align: 'left' },
  { title: 'Narration', width: 26, align: 'left' },
  { title: 'Source', width: 26, align: 'left' },
  { title: 'Debit', width: 14, align: 'right' },
  { title: 'Credit', width: 14, align: 'right' },
  { title: 'Balance', width: 17, align: 'right' },
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

/** What the writer uses of a pdfkit standard font besides its name (not in pdfkit's typings). */
interface StandardFont {
  id: string;
  ascender: number;
  ref(): unknown;
}

/**
 * Lines of Courier written straight into the page's content stream. pdfkit's `doc.text` measures every glyph
 * several times a call (width and kerning-pair lookups, one object per glyph), which held long statements to
 * about 8,000 rows/s; Courier needs none of it (every glyph 0.6 em, no kerning pairs). A line is placed by its
 * top-left corner as `doc.text` places it and shown as one WinAnsi string; the lines of a page are gathered and
 * written as one text object when the page ends.
 */
class Typewriter {
  private readonly fonts: Record<FontName, StandardFont>;
  private pending = '';
  private font: StandardFont | null = null;
  private size = 0;

  constructor(private readonly doc: PDFKit.PDFDocument) {
    const fontOf = (name: FontName) => (doc.font(name) as unknown as { _font: StandardFont })._font;
    this.fonts = { [BOLD]: fontOf(BOLD), [REGULAR]: fontOf(REGULAR) };
  }

  line(fontName: FontName, size: number, x: number, y: number, text: string) {
    const font = this.fonts[fontName];
    if (font !== this.font || size !== this.size) {
      // The page's resources must name every font its content uses.
      (this.doc.page.fonts as Record<string, unknown>)[font.id] ??= font.ref();
      this.pending += `/${font.id} ${size} Tf\n`;
      this.font = font;
      this.size = size;
    }
    const baseline = this.doc.page.height - y - (font.ascender / 1000) * size;
    this.pending += `1 0 0 1 ${x.toFixed(2)} ${baseline.toFixed(2)} Tm\n[<${winAnsiHex(text)}>] TJ\n`;
  }

  /** Writes the gathered lines into the current page: before it ends, and before anything else is drawn on it. */
  flush() {
    if (this.pending === '') return;
    // pdfkit's pages draw with the y axis flipped (origin top left); text is set in the PDF's own orientation.
    this.doc.addContent(Buffer.from(`q 1 0 0 -1 0 ${this.doc.page.height} cm\nBT\n${this.pending}ET\nQ\n`, 'latin1'));
    this.pending = '';
    this.font = null;
  }
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
  // pdfkit emits every object in several small chunks; `out` gets them joined, one write per batch of rows.
  const produced: Uint8Array[] = [];
  doc.on('data', (chunk: Uint8Array) => produced.push(chunk));
  const handOver = () => {
    if (produced.length > 0 && !out.destroyed) out.write(Buffer.concat(produced));
    produced.length = 0;
  };

  const money = (value: Decimal.Value) => displayAmount(value, header.currency);
  const withCurrency = (value: Decimal.Value) => `${money(value)} ${header.currency}`;
  const pen = new Typewriter(doc);
  let pages = header.rowCount === null ? null : pdfPageCount(header.rowCount);
  let page = 1;
  let capacity = PDF_LAYOUT.firstPageRows;
  let rowsOnPage = 0;
  let y = MARGIN;

  const rule = (at: number) => {
    pen.flush();
    doc
      .moveTo(MARGIN, at)
      .lineTo(PAGE.width - MARGIN, at)
      .lineWidth(0.5)
      .stroke();
  };
  const tableHead = () => {
    pen.line(BOLD, FONT_SIZE, MARGIN, y, tableLine(COLUMNS.map((c) => c.title)));
    rule(y + ROW_HEIGHT - 2);
    y += HEAD_HEIGHT;
  };
  const footer = () => {
    const footerY = PAGE.height - MARGIN - FONT_SIZE;
    pen.line(REGULAR, FONT_SIZE, MARGIN, footerY, `${header.issuerName} - account statement ${header.accountNumber}`);
    pages = pages === null ? null : Math.max(pages, page); // never "Page 5 of 4", should the count ever be short
    const label = pages === null ? `Page ${page}` : `Page ${page} of ${pages}`;
    pen.line(REGULAR, FONT_SIZE, PAGE.width - MARGIN - label.length * FONT_SIZE * 0.6, footerY, label);
    pen.flush();
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
    pen.line(BOLD, 9, MARGIN, y, label);
    pen.line(REGULAR, 9, MARGIN + 130, y, value);
    y += LINE_HEIGHT;
  };

  // Header block: HEADER_LINES lines.
  pen.line(BOLD, 15, MARGIN, y, `${header.issuerName} - Account statement`);
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
  pen.line(REGULAR, FONT_SIZE, MARGIN, y, roundingNote(header.currency));
  y = FIRST_TABLE_TOP;
  tableHead();

  const totals = new StatementTotals(header.openingBalance);
  for (;;) {
    const batch = await rows.next();
    if (batch.length === 0) break;
    for (const row of batch) {
      if (rowsOnPage === capacity) newPage();
      const { debit, credit } = totals.add(row);
      pen.line(
        REGULAR,
        FONT_SIZE,
        MARGIN,
        y,
        tableLine([
          displayTime(row.occurredAt),
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
    await tick(); // pdfkit emits what it pushed while not reading on the next tick
    handOver();
    await drained(out);
  }

  // Totals and closing balance.
  if (rowsOnPage + PDF_LAYOUT.summarySlots > capacity) newPage();
  rule(y);
  y += 4;
  pen.line(BOLD, FONT_SIZE, MARGIN, y, tableLine(['Totals', '', '', '', '', money(totals.debits), money(totals.credits), '']));
  y += ROW_HEIGHT * 2;
  line('Opening balance', withCurrency(header.openingBalance));
  line('Total debits', withCurrency(totals.debits));
  line('Total credits', withCurrency(totals.credits));
  line('Closing balance', withCurrency(totals.closing));
  line('Lines', String(totals.rows));
  footer();

  doc.end();
  await unlessClosed(out, ended);
  handOver();
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
    .join(COLUMN_GAP)
    .trimEnd();
}

/** The standard PDF fonts speak WinAnsi: characters outside Latin-1 are shown as "?" (cells before they are cut to width). */
function printable(value: string): string {
  return value.replace(/[^\x20-\x7e\xa0-\xff…]/g, '?');
}

/** Text as the hex of its WinAnsi codes, the encoding of the standard fonts. */
function winAnsiHex(value: string): string {
  return Buffer.from(printable(value).replaceAll('…', '\x85'), 'latin1').toString('hex');
}
