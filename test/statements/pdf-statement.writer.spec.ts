import { PassThrough } from 'node:stream';
import { writePdfStatement } from '../../src/statements/pdf-statement.writer';
import type { StatementHeader, StatementRow } from '../../src/statements/statement.types';
import { pdfTextRuns } from '../support/statement-readers';

/** A landscape A4 page and the writer's margins, in points. */
const PAGE_WIDTH = 841.89;
const MARGIN = 30;
/** Courier: every glyph is 0.6 em wide. */
const GLYPH_EM = 0.6;

async function render(rows: StatementRow[]): Promise<Buffer> {
  const header: StatementHeader = {
    issuerName: 'Paygate',
    accountNumber: '10000100001',
    accountName: 'Settlement wallet',
    currency: 'KES',
    ownerName: 'DEMO settlement',
    clientName: 'DEMO merchant',
    from: new Date('2026-01-01T00:00:00Z'),
    to: new Date('2026-01-31T23:59:59Z'),
    openingBalance: '0.0000',
    generatedAt: new Date('2026-02-01T00:00:00Z'),
    rowCount: rows.length,
  };
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  let batch: StatementRow[] = rows;
  await writePdfStatement(header, { next: async () => [batch, (batch = [])][0] }, out, { compress: false });
  return Buffer.concat(chunks);
}

describe('PDF statement columns', () => {
  it('keeps every column clear of the next when values fill their columns, and every line inside the margins', async () => {
    // Values as wide as their columns: a UUID id, a 40-character reference, a long narration and source, big amounts.
    const row: StatementRow = {
      occurredAt: new Date('2026-01-15T10:20:30Z'),
      transactionId: '3f2b8c1e-9a7d-4e5f-8b6a-1c2d3e4f5a6b',
      reference: 'po-5d41402a-bc4b-2a76-b971-9d911017c592a',
      narration: 'Salary November, Wanjiku K',
      source: 'IMT payout to 2547*****678',
      amount: '-999999999.9900',
      balanceAfter: '99999999999.9900',
    };
    const runs = pdfTextRuns(await render([row]));
    const line = runs.find((r) => r.text.includes(row.transactionId!));
    expect(line).toBeDefined();
    const { text, size, x } = line!;
    const values = [
      '2026-01-15 10:20:30',
      row.transactionId!,
      row.reference!,
      row.narration,
      row.source,
      '999,999,999.99',
      '99,999,999,999.99',
    ];
    let end = 0;
    for (const value of values) {
      const start = text.indexOf(value, end);
      expect(start).toBeGreaterThanOrEqual(end); // whole, in order
      if (end > 0) expect((start - end) * GLYPH_EM * size).toBeGreaterThanOrEqual(1.2 * size); // two glyphs of space at least
      end = start + value.length;
    }
    for (const run of runs) expect(run.x + run.text.length * GLYPH_EM * run.size).toBeLessThanOrEqual(PAGE_WIDTH - MARGIN + 0.01);
    expect(x).toBe(MARGIN);
  });
});
