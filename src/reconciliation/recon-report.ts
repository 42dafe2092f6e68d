import ExcelJS from 'exceljs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { csvLine, textCell } from '../common/csv';
import { amountCell, amountFormat } from '../statements/xlsx-statement.writer';
import type { ReconRow, RunRow } from './reconciliation.repository';

export type ReportFormat = 'csv' | 'xlsx';
export const REPORT_FORMATS: readonly ReportFormat[] = ['csv', 'xlsx'];

/** One line per difference of a run: what a person, or the operator's support, reads to work it. */
export const REPORT_COLUMNS = [
  'Rail',
  'Run',
  'Row',
  'Outcome',
  'State',
  'Moved at',
  'Our kind',
  'Our record',
  'Our reference',
  'Operator reference',
  'Currency',
  'Our amount',
  'Operator amount',
  'Our status',
  'Operator status',
  'Client',
  'Closed by',
  'Note',
] as const;

const DATE_FORMAT = 'yyyy-mm-dd hh:mm:ss';

/** A row's cells in REPORT_COLUMNS' order; references and ids stay text, amounts exact. */
function cells(run: RunRow, row: ReconRow, clientCode: string | null) {
  return {
    text: [run.rail, String(run.id), String(row.id), row.outcome, row.state ?? ''],
    movedAt: row.moved_at === null ? null : new Date(row.moved_at),
    references: [row.our_kind, row.our_record_id, row.our_reference, row.operator_reference],
    currency: row.currency?.trim() ?? null,
    amounts: [row.our_amount, row.operator_amount],
    statuses: [row.our_status, row.operator_status],
    client: clientCode,
    closedBy: row.resolved_by ?? row.settled_by,
    note: row.resolution_note,
  };
}

/**
 * Writes a run's differences as CSV or as an XLSX workbook (exceljs's streaming writer: each line is committed as it
 * is added), one line per difference, to `out`, and ends it. `clients` names each row's client by its code.
 */
export async function writeReconReport(
  format: ReportFormat,
  run: RunRow,
  rows: readonly ReconRow[],
  clients: ReadonlyMap<string, string>,
  out: Writable,
): Promise<void> {
  const lines = rows.map((row) => cells(run, row, row.client_id === null ? null : (clients.get(row.client_id) ?? row.client_id)));
  if (format === 'csv') {
    const finished = once(out, 'finish');
    out.write(csvLine([...REPORT_COLUMNS]));
    for (const l of lines) {
      const line = [
        ...l.text,
        l.movedAt,
        ...l.references.map(textCell),
        l.currency,
        ...l.amounts,
        ...l.statuses,
        textCell(l.client),
        l.closedBy,
        l.note,
      ];
      if (!out.write(csvLine(line))) await once(out, 'drain');
    }
    out.end();
    await finished;
    return;
  }
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet(`Run ${run.id}`);
  sheet.columns = REPORT_COLUMNS.map((header) => ({ width: Math.max(12, header.length + 4) }));
  const heading = sheet.addRow([...REPORT_COLUMNS]);
  heading.font = { bold: true };
  heading.commit();
  for (const l of lines) {
    const line = sheet.addRow([
      ...l.text,
      l.movedAt,
      ...l.references,
      l.currency,
      ...l.amounts.map(amountCell),
      ...l.statuses,
      l.client,
      l.closedBy,
      l.note,
    ]);
    line.getCell(6).numFmt = DATE_FORMAT;
    const format = amountFormat(l.currency ?? 'KES');
    line.getCell(12).numFmt = format;
    line.getCell(13).numFmt = format;
    line.commit();
  }
  sheet.commit();
  await workbook.commit();
}
