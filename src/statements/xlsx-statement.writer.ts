import ExcelJS from 'exceljs';
import type { Writable } from 'node:stream';
import type Decimal from 'decimal.js';
import { minorUnits } from '../common/currencies';
import { Money } from '../common/money';
import { roundingNote, StatementHeader, StatementRows, StatementTotals } from './statement.types';
import { drained, tick, unlessClosed } from './stream-flow';

export const XLSX_COLUMNS = ['Date', 'Transaction ID', 'Reference', 'Narration', 'Source', 'Debit', 'Credit', 'Balance'] as const;
const DATE_FORMAT = 'yyyy-mm-dd hh:mm:ss';

/** The currency's minor units as a number format: the cell keeps the exact value, the sheet shows it rounded. */
export function amountFormat(currency: string): string {
  const digits = minorUnits(currency);
  return digits === 0 ? '#,##0' : `#,##0.${'0'.repeat(digits)}`;
}

/**
 * An amount as a cell value: a number when the double holds it exactly (up to 15 significant digits, which is
 * every realistic balance), so the sheet can sum it; otherwise the exact decimal text.
 */
export function amountCell(value: Decimal.Value | null): number | string | null {
  if (value === null) return null;
  const exact = new Money(value);
  const n = exact.toNumber();
  return new Money(String(n)).eq(exact) ? n : exact.toFixed(4);
}

interface SheetInternals {
  /**
   * WorksheetWriter's XML stream (an exceljs StreamBuf). Its `pipes` hold the zip entry's input stage (a
   * `readable-stream` PassThrough in front of the deflate stream), which StreamBuf writes to without ever
   * looking at the return value.
   */
  stream?: { pipes?: Writable[] };
}

/**
 * Streams an XLSX statement with exceljs's streaming WorkbookWriter: each row is committed (turned into XML and
 * handed to the zip stream) as soon as it is added, and no shared-strings table is kept, so memory does not grow
 * with the number of rows. exceljs writes into its zip stages without honouring their backpressure (left alone,
 * the XML piles up in front of the deflate stream, about 300 bytes a row), so after every batch this waits for
 * that stage and for `out` to drain before reading more rows.
 */
export async function writeXlsxStatement(header: StatementHeader, rows: StatementRows, out: Writable): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  workbook.creator = header.issuerName;
  workbook.created = header.generatedAt;
  const sheet = workbook.addWorksheet('Statement');
  sheet.columns = [
    { key: 'date', width: 21 },
    { key: 'id', width: 38 },
    { key: 'reference', width: 24 },
    { key: 'narration', width: 42 },
    { key: 'source', width: 20 },
    { key: 'debit', width: 18 },
    { key: 'credit', width: 18 },
    { key: 'balance', width: 20 },
  ];
  const amountFmt = amountFormat(header.currency);
  const amountStyle: Partial<ExcelJS.Style> = { numFmt: amountFmt };
  const textStyle: Partial<ExcelJS.Style> = {};
  const rowStyles = [{ numFmt: DATE_FORMAT }, textStyle, textStyle, textStyle, textStyle, amountStyle, amountStyle, amountStyle];
  const bold = { bold: true };
  const labelled = (label: string, value: ExcelJS.CellValue, numFmt?: string) => {
    const row = sheet.addRow([label, value]);
    row.getCell(1).font = bold;
    if (numFmt) row.getCell(2).numFmt = numFmt;
    row.commit();
  };

  const title = sheet.addRow([`${header.issuerName} - Account statement`]);
  title.getCell(1).font = { bold: true, size: 14 };
  title.commit();
  labelled('Account number', header.accountNumber);
  labelled('Account name', header.accountName);
  labelled('Currency', header.currency);
  labelled('Account holder', header.ownerName);
  labelled('Client', header.clientName);
  labelled('Period from', header.from, DATE_FORMAT);
  labelled('Period to', header.to, DATE_FORMAT);
  labelled('Generated at', header.generatedAt, DATE_FORMAT);
  labelled('Opening balance', amountCell(header.openingBalance), amountFmt);
  labelled('Issued by', header.issuerName);
  sheet.addRow([roundingNote(header.currency)]).commit();
  sheet.addRow([]).commit();
  const columns = sheet.addRow([...XLSX_COLUMNS]);
  columns.font = bold;
  columns.commit();

  const totals = new StatementTotals(header.openingBalance);
  const deflate = () => (sheet as unknown as SheetInternals).stream?.pipes ?? [];
  for (;;) {
    const batch = await rows.next();
    if (batch.length === 0) break;
    for (const row of batch) {
      const { debit, credit } = totals.add(row);
      const line = sheet.addRow([
        row.occurredAt,
        row.transactionId ?? '',
        row.reference ?? '',
        row.narration,
        row.source,
        amountCell(debit),
        amountCell(credit),
        amountCell(row.balanceAfter),
      ]);
      // Shared style objects: exceljs resolves a style once per object, not once per cell.
      line.eachCell({ includeEmpty: true }, (cell, column) => {
        cell.style = rowStyles[column - 1];
      });
      line.commit();
    }
    await tick();
    // The zip stages do not report being closed when `out` is, so a wait on them also ends when `out` closes.
    for (const stage of deflate()) await unlessClosed(out, drained(stage));
    await drained(out);
  }

  sheet.addRow([]).commit();
  const totalsRow = sheet.addRow(['Totals', '', '', '', '', amountCell(totals.debits), amountCell(totals.credits), '']);
  totalsRow.font = bold;
  totalsRow.getCell(6).numFmt = amountFmt;
  totalsRow.getCell(7).numFmt = amountFmt;
  totalsRow.commit();
  labelled('Total debits', amountCell(totals.debits), amountFmt);
  labelled('Total credits', amountCell(totals.credits), amountFmt);
  labelled('Closing balance', amountCell(totals.closing), amountFmt);
  labelled('Lines', totals.rows);
  sheet.commit();
  await unlessClosed(out, workbook.commit());
}
