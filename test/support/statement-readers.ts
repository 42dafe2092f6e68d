import { NestFastifyApplication } from '@nestjs/platform-fastify';
import ExcelJS from 'exceljs';
import { inflateSync } from 'node:zlib';
import request from 'supertest';
import { Money } from '../../src/common/money';

/** Readers for the statement documents (GET /api/v1/account-statements/doc): the XLSX table and the PDF text. */

/** Reads a binary response body into a Buffer (supertest buffers only text by default). */
export function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void) {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/**
 * The text a PDF shows, one array per page content stream and one string per text operator: streams are inflated
 * (pdfkit deflates them) and the hex strings of each TJ array are decoded from WinAnsi.
 */
export function pdfPages(pdf: Buffer): string[][] {
  const pages: string[][] = [];
  const raw = pdf.toString('latin1');
  // Each stream is read by its /Length and skipped whole, so no byte of compressed data is ever taken for syntax.
  const streamRe = /<<([^<>]*)>>\s*stream\r?\n/g;
  let match: RegExpExecArray | null;
  while ((match = streamRe.exec(raw))) {
    const start = match.index + match[0].length;
    const length = Number(/\/Length (\d+)/.exec(match[1])?.[1]);
    streamRe.lastIndex = start + length;
    let body = pdf.subarray(start, start + length);
    if (/FlateDecode/.test(match[1])) body = inflateSync(body);
    const texts: string[] = [];
    for (const tj of body.toString('latin1').matchAll(/\[((?:<[0-9a-f]*>\s*-?[\d.]*\s*)+)\]\s*TJ/gi)) {
      texts.push([...tj[1].matchAll(/<([0-9a-f]*)>/gi)].map((h) => Buffer.from(h[1], 'hex').toString('latin1')).join(''));
    }
    if (texts.length > 0) pages.push(texts);
  }
  return pages;
}

export const pdfText = (pdf: Buffer): string[] => pdfPages(pdf).flat();

export interface SheetRow {
  date: Date;
  id: string;
  reference: string;
  narration: string;
  source: string;
  debit: string | null;
  credit: string | null;
  balance: string;
}

/** Parses the statement workbook back: header values by label, the transaction table, and the summary. */
export async function readWorkbook(buffer: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  const labels = new Map<string, ExcelJS.CellValue>();
  const rows: SheetRow[] = [];
  let inTable = false;
  let tableDone = false;
  let totals: { debit: string; credit: string } | null = null;
  const amountFormats = new Set<string>();
  const money = (v: ExcelJS.CellValue) => (v === null || v === undefined || v === '' ? null : new Money(v as string | number).toFixed(4));
  sheet.eachRow({ includeEmpty: true }, (row) => {
    const values = row.values as ExcelJS.CellValue[];
    const first = values[1];
    if (!inTable && first === 'Date') {
      inTable = true;
      return;
    }
    if (inTable && !tableDone) {
      if (first === undefined || first === null) {
        tableDone = true;
        return;
      }
      rows.push({
        date: first as Date,
        id: values[2] as string,
        reference: (values[3] as string) ?? '',
        narration: (values[4] as string) ?? '',
        source: values[5] as string,
        debit: money(values[6]),
        credit: money(values[7]),
        balance: money(values[8])!,
      });
      amountFormats.add(String(row.getCell(8).numFmt));
      return;
    }
    if (first === 'Totals') {
      totals = { debit: money(values[6])!, credit: money(values[7])! };
      return;
    }
    if (typeof first === 'string') labels.set(first, values[2]);
  });
  return {
    labels,
    rows,
    totals: totals as { debit: string; credit: string } | null,
    money,
    amountFormats,
    title: sheet.getRow(1).getCell(1).value,
  };
}

/** The whole statement (all time) of a merchant's settlement wallet, as its wallet user downloads it (asserts 200). */
export function settlementStatement(
  app: NestFastifyApplication,
  merchant: { settlementAccountNumber: string; tenant: { auth: string } },
  docType: 'PDF' | 'EXCEL',
) {
  return request(app.getHttpServer())
    .get('/api/v1/account-statements/doc')
    .query({ account_number: merchant.settlementAccountNumber, start_date: '2000-01-01', end_date: '2100-01-01', doc_type: docType })
    .set('authorization', merchant.tenant.auth)
    .buffer(true)
    .parse(binary)
    .expect(200);
}

/** A text run of a PDF page where it is drawn: x of its start and its font size, in points. */
export interface PdfTextRun {
  x: number;
  size: number;
  text: string;
}

/**
 * The text runs of an uncompressed PDF's pages with their positions, from each run's `Tf` (font size) and `Tm` (x)
 * before its TJ: enough to measure the monospaced statement's columns.
 */
export function pdfTextRuns(pdf: Buffer): PdfTextRun[] {
  const runs: PdfTextRun[] = [];
  let size = 0;
  let x = 0;
  for (const op of pdf.toString('latin1').matchAll(/\/\w+ ([\d.]+) Tf|1 0 0 1 ([\d.-]+) [\d.-]+ Tm|\[((?:<[0-9a-f]*>\s*)+)\]\s*TJ/gi)) {
    if (op[1] !== undefined) size = Number(op[1]);
    else if (op[2] !== undefined) x = Number(op[2]);
    else
      runs.push({ x, size, text: [...op[3].matchAll(/<([0-9a-f]*)>/gi)].map((h) => Buffer.from(h[1], 'hex').toString('latin1')).join('') });
  }
  return runs;
}
