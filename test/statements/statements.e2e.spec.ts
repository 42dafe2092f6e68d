import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import ExcelJS from 'exceljs';
import { inflateSync } from 'node:zlib';
import request from 'supertest';
import { Money } from '../../src/common/money';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import { createTenant, createTestApp, TestTenant, uniqueCode } from '../support/test-app';
import { createWallet } from '../support/wallet-fixtures';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOC = '/api/v1/account-statements/doc';

/** Reads a binary response body into a Buffer (supertest buffers only text by default). */
function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void) {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/**
 * The text a PDF shows, one string per text operator: page content streams are inflated (pdfkit deflates
 * them) and the hex strings of each TJ array are decoded from WinAnsi.
 */
function pdfText(pdf: Buffer): string[] {
  const texts: string[] = [];
  const raw = pdf.toString('latin1');
  const streamRe = /stream\r?\n/g;
  let match: RegExpExecArray | null;
  while ((match = streamRe.exec(raw))) {
    const start = match.index + match[0].length;
    const end = raw.indexOf('endstream', start);
    const dict = raw.slice(raw.lastIndexOf('<<', match.index), match.index);
    let body = pdf.subarray(start, end);
    if (/FlateDecode/.test(dict)) {
      try {
        body = inflateSync(body);
      } catch {
        continue; // not a content stream we can read
      }
    }
    for (const tj of body.toString('latin1').matchAll(/\[((?:<[0-9a-f]*>\s*-?[\d.]*\s*)+)\]\s*TJ/gi)) {
      texts.push([...tj[1].matchAll(/<([0-9a-f]*)>/gi)].map((h) => Buffer.from(h[1], 'hex').toString('latin1')).join(''));
    }
    streamRe.lastIndex = end;
  }
  return texts;
}

interface SheetRow {
  date: Date;
  id: string;
  narration: string;
  source: string;
  debit: string | null;
  credit: string | null;
  balance: string;
}

/** Parses the statement workbook back: header values by label, the transaction table, and the summary. */
async function readWorkbook(buffer: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  const labels = new Map<string, ExcelJS.CellValue>();
  const rows: SheetRow[] = [];
  let inTable = false;
  let tableDone = false;
  let totals: { debit: string; credit: string } | null = null;
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
        narration: (values[3] as string) ?? '',
        source: values[4] as string,
        debit: money(values[5]),
        credit: money(values[6]),
        balance: money(values[7])!,
      });
      return;
    }
    if (first === 'Totals') {
      totals = { debit: money(values[5])!, credit: money(values[6])! };
      return;
    }
    if (typeof first === 'string') labels.set(first, values[2]);
  });
  return { labels, rows, totals: totals as { debit: string; credit: string } | null, money };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('account statements (GET /account-statements/doc)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let walletA: { account_number: string };
  let walletB: { account_number: string };
  let serviceCode: string;
  let periodStart: Date;
  let periodEnd: Date;
  /** Wallet A's transaction records in the period, in booking order, as the API returned them. */
  const expected: Array<{
    transaction_id: string;
    transaction_source: string;
    previous_balance: string;
    current_balance: string;
    narration: string | null;
  }> = [];
  const http = () => request(app.getHttpServer());

  const statement = (query: Record<string, string>, auth = tenant.auth) =>
    http().get(DOC).query(query).set('authorization', auth).buffer(true).parse(binary);

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app);
    other = await createTenant(app);
    walletA = await createWallet(app, tenant);
    walletB = await createWallet(app, tenant);
    const service = await http()
      .post('/api/v1/client-services')
      .set('authorization', tenant.auth)
      .send({
        client_code: tenant.clientCode,
        client_service_name: 'Statements',
        service_code: 'CUSTOM_SERVICE',
        has_transaction_fee: true,
        transaction_fee_type: 'FIXED',
        transaction_fee: 2.5,
        minimum_transaction_amount: 1,
        maximum_transaction_amount: 100000,
        is_active: 1,
      })
      .expect(201);
    serviceCode = service.body.client_service_code;

    // Before the period: the funding.
    await app.get(MoneyMovementsService).fund(tenant.clientId, walletA.account_number, new Money('1000'));
    await app.get(MoneyMovementsService).fund(tenant.clientId, walletB.account_number, new Money('500'));
    await sleep(30);
    periodStart = new Date();
    await sleep(30);

    const money = (command: 'CREDIT' | 'DEBIT', amount: number, narration: string) =>
      http()
        .post('/api/v1/transactions')
        .query({ command })
        .set('authorization', tenant.auth)
        .send({
          account_number: walletA.account_number,
          client_code: tenant.clientCode,
          client_service_code: serviceCode,
          transaction_amount: amount,
          currency: 'KES',
          source_transaction_id: uniqueCode('S'),
          transaction_narration: narration,
        })
        .expect(201);
    const transfer = (from: string, to: string, amount: number, narration: string) =>
      http()
        .post('/api/v1/account-transfers')
        .set('authorization', tenant.auth)
        .send({
          source_account_number: from,
          destination_account_number: to,
          client_code: tenant.clientCode,
          client_service_code: serviceCode,
          transaction_amount: amount,
          currency: 'KES',
          source_transaction_id: uniqueCode('S'),
          transaction_source: 'INTERNAL',
          transaction_narration: narration,
        })
        .expect(201);

    const credit = await money('CREDIT', 200, 'Top up');
    expected.push({ ...credit.body, narration: 'Top up' });
    const debit = await money('DEBIT', 75.25, 'Groceries');
    expected.push({ ...debit.body, narration: 'Groceries' });
    const out = await transfer(walletA.account_number, walletB.account_number, 120, 'Rent share');
    expected.push({ ...out.body.source_transaction, narration: 'Rent share' });
    const back = await transfer(walletB.account_number, walletA.account_number, 40.5, 'Refund');
    expected.push({ ...back.body.destination_transaction, narration: 'Refund' });
    const reversal = await http()
      .post(`/api/v1/transactions/${debit.body.transaction_id}`)
      .query({ command: 'REVERSE' })
      .set('authorization', tenant.auth)
      .send({ transaction_narration: 'Groceries returned' });
    expect([200, 201]).toContain(reversal.status);
    expected.push({ ...reversal.body.destination_transaction, narration: 'Groceries returned' });

    await sleep(30);
    periodEnd = new Date();
    await sleep(30);
    // After the period: must not appear.
    await money('CREDIT', 10, 'Too late');
  });
  afterAll(async () => app.close());

  const period = () => ({
    account_number: walletA.account_number,
    start_date: periodStart.toISOString(),
    end_date: periodEnd.toISOString(),
  });

  it('streams an XLSX statement with the header, opening balance, rows, running balances, totals and closing balance', async () => {
    const res = await statement({ ...period(), doc_type: 'EXCEL' }).expect(200);
    expect(res.headers['content-type']).toBe(XLSX_TYPE);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="statement-${walletA.account_number}-${periodStart.toISOString().slice(0, 10)}-${periodEnd.toISOString().slice(0, 10)}.xlsx"`,
    );
    const { labels, rows, totals, money } = await readWorkbook(res.body);

    expect(labels.get('Account number')).toBe(walletA.account_number);
    expect(labels.get('Account name')).toBe('Main wallet');
    expect(labels.get('Currency')).toBe('KES');
    expect(labels.get('Account holder')).toBe('Jane Wanjiru');
    expect((labels.get('Period from') as Date).toISOString()).toBe(periodStart.toISOString());
    expect(money(labels.get('Opening balance'))).toBe('1000.0000');

    expect(rows).toHaveLength(expected.length);
    rows.forEach((row, i) => {
      const record = expected[i];
      expect(row.id).toBe(record.transaction_id);
      expect(row.source).toBe(record.transaction_source);
      expect(row.narration).toBe(record.narration);
      const movement = new Money(record.current_balance).minus(record.previous_balance);
      expect(row.debit).toBe(movement.isNegative() ? movement.neg().toFixed(4) : null);
      expect(row.credit).toBe(movement.isNegative() ? null : movement.toFixed(4));
      expect(row.balance).toBe(new Money(record.current_balance).toFixed(4));
      expect(row.date.getTime()).toBeGreaterThanOrEqual(periodStart.getTime() - 1000); // date cells are whole seconds
      expect(row.date.getTime()).toBeLessThanOrEqual(periodEnd.getTime() + 1000);
    });
    expect(rows.map((r) => r.source)).toEqual([
      'EXTERNAL_CREDIT',
      'EXTERNAL_DEBIT',
      'INTERNAL_TRANSFER_DEBIT',
      'INTERNAL_TRANSFER_CREDIT',
      'INTERNAL_REVERAL_CREDIT',
    ]);

    // The running balance walks from the opening to the closing balance, and the totals add up.
    let running = new Money('1000');
    let debits = new Money(0);
    let credits = new Money(0);
    for (const row of rows) {
      if (row.debit) {
        running = running.minus(row.debit);
        debits = debits.plus(row.debit);
      }
      if (row.credit) {
        running = running.plus(row.credit);
        credits = credits.plus(row.credit);
      }
      expect(row.balance).toBe(running.toFixed(4));
    }
    const closing = expected[expected.length - 1].current_balance;
    expect(money(labels.get('Closing balance'))).toBe(new Money(closing).toFixed(4));
    expect(money(labels.get('Total debits'))).toBe(debits.toFixed(4));
    expect(money(labels.get('Total credits'))).toBe(credits.toFixed(4));
    expect(totals).toEqual({ debit: debits.toFixed(4), credit: credits.toFixed(4) });
    expect(labels.get('Transactions')).toBe(expected.length);
    // 1000 + 197.5 − 77.75 − 122.5 + 40.5 + 77.75 (fees: 2.5 each on the credit, the debit and the outgoing transfer)
    expect(new Money(closing).toFixed(4)).toBe(new Decimal('1115.5').toFixed(4));
  });

  it('streams a PDF statement showing the account, the rows and the closing balance', async () => {
    const res = await statement({ ...period(), doc_type: 'PDF' }).expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="statement-${walletA.account_number}-[0-9-]+\\.pdf"$`),
    );
    const pdf: Buffer = res.body;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(pdf);
    const all = text.join('\n');
    expect(all).toContain('Account statement');
    expect(text).toContain(walletA.account_number);
    expect(text).toContain('Jane Wanjiru');
    expect(text).toContain('1000.0000 KES'); // opening balance
    expect(text).toContain('1115.5000 KES'); // closing balance
    for (const record of expected) {
      const line = text.find((t) => t.includes(record.transaction_id));
      expect(line).toBeDefined();
      expect(line).toContain(record.transaction_source);
      expect(line!.trimEnd().endsWith(new Money(record.current_balance).toFixed(4))).toBe(true);
    }
    expect(all).not.toContain('Too late');
  });

  it('takes a bare end date as the whole day and starts from a zero opening balance before the first posting', async () => {
    const yesterday = new Date(periodStart.getTime() - 86_400_000).toISOString().slice(0, 10);
    const today = new Date().toISOString().slice(0, 10);
    const res = await statement({
      account_number: walletA.account_number,
      start_date: yesterday,
      end_date: today,
      doc_type: 'EXCEL',
    }).expect(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="statement-${walletA.account_number}-${yesterday}-${today}.xlsx"`,
    );
    const { labels, rows, money } = await readWorkbook(res.body);
    expect(money(labels.get('Opening balance'))).toBe('0.0000');
    expect(rows).toHaveLength(expected.length + 2); // the funding, the period's five, the late credit
    expect(rows[0]).toMatchObject({ credit: '1000.0000', balance: '1000.0000', source: 'EXTERNAL_CREDIT', narration: 'Wallet funding' });
    expect(money(labels.get('Closing balance'))).toBe(rows[rows.length - 1].balance);
  });

  describe('errors', () => {
    const expectError = (res: request.Response, status: number) => {
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      const body = JSON.parse(res.body.toString());
      expect(body).toMatchObject({ status, code: 'HttpException' });
      return body as { message: string | string[] };
    };

    it('answers 400 with an array of messages when parameters are missing or invalid', async () => {
      const missing = expectError(await statement({}), 400);
      expect(Array.isArray(missing.message)).toBe(true);
      expect(missing.message.length).toBeGreaterThanOrEqual(4);

      const badType = expectError(await statement({ ...period(), doc_type: 'CSV' }), 400);
      expect(badType.message).toEqual(['doc_type must be one of the following values: EXCEL, PDF']);

      const badDate = expectError(await statement({ ...period(), start_date: 'yesterday', doc_type: 'PDF' }), 400);
      expect(badDate.message).toEqual(['start_date must be an ISO 8601 date or date-time']);

      const noAccount = expectError(await statement({ start_date: '2025-01-01', end_date: '2025-01-02', doc_type: 'PDF' }), 400);
      expect(Array.isArray(noAccount.message)).toBe(true);
    });

    it('answers 400 when end_date is before start_date', async () => {
      const body = expectError(
        await statement({ account_number: walletA.account_number, start_date: '2025-02-01', end_date: '2025-01-31', doc_type: 'EXCEL' }),
        400,
      );
      expect(body.message).toEqual(['end_date must not be before start_date']);
      expectError(
        await statement({
          account_number: walletA.account_number,
          start_date: '2025-02-01T10:00:00Z',
          end_date: '2025-02-01T09:59:59Z',
          doc_type: 'PDF',
        }),
        400,
      );
    });

    it('answers 400 when the period has no transactions (and gives its connection back every time)', async () => {
      for (let i = 0; i < 25; i++) {
        const body = expectError(
          await statement({
            account_number: walletA.account_number,
            start_date: '2000-01-01',
            end_date: '2000-12-31',
            doc_type: i % 2 ? 'PDF' : 'EXCEL',
          }),
          400,
        );
        expect(body.message).toBe('No transactions in the period');
      }
      await statement({ ...period(), doc_type: 'PDF' }).expect(200);
    });

    it("answers 404 for an unknown wallet and for another client's wallet", async () => {
      const unknown = expectError(await statement({ ...period(), account_number: '19999999999', doc_type: 'PDF' }), 404);
      expect(unknown.message).toBe('Wallet not found');
      const foreign = expectError(await statement({ ...period(), doc_type: 'EXCEL' }, other.auth), 404);
      expect(foreign.message).toBe('Wallet not found');
    });

    it('answers 401 without a token', async () => {
      const res = await http()
        .get(DOC)
        .query({ ...period(), doc_type: 'PDF' });
      expect(res.status).toBe(401);
    });
  });
});
