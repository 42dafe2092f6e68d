import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import { Money } from '../../src/common/money';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import { withEnv } from '../support/gateway-fixtures';
import { binary, pdfPages, readWorkbook } from '../support/statement-readers';
import { appWithTenants, createTenant, createTestApp, dataSource, TestTenant, uniqueCode } from '../support/test-app';
import { createWallet } from '../support/wallet-fixtures';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOC = '/api/v1/account-statements/doc';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A KES amount as an accountant reads it: 2 decimals, thousands separated ("1,115.50"). */
const displayKes = (value: string) =>
  new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(value));

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
    source_transaction_id: string | null;
    previous_balance: string;
    current_balance: string;
    narration: string | null;
  }> = [];
  const http = () => request(app.getHttpServer());

  const statement = (query: Record<string, string>, auth = tenant.auth) =>
    http().get(DOC).query(query).set('authorization', auth).buffer(true).parse(binary);

  beforeAll(async () => {
    ({ app, tenant, other } = await appWithTenants());
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
    const { labels, rows, totals, money, amountFormats, title } = await readWorkbook(res.body);

    expect(labels.get('Account number')).toBe(walletA.account_number);
    expect(labels.get('Account name')).toBe('Main wallet');
    expect(labels.get('Currency')).toBe('KES');
    expect(labels.get('Account holder')).toBe('Jane Wanjiru');
    expect((labels.get('Period from') as Date).toISOString()).toBe(periodStart.toISOString());
    expect(money(labels.get('Opening balance'))).toBe('1000.0000');

    // A posting with a fee is two lines: the movement at its full amount, then the fee as booked (refunded by the
    // reversal); sources are readable, and each line carries its record's id and the merchant's reference.
    expect(rows.map((r) => [r.source, r.narration, r.debit, r.credit, r.balance])).toEqual([
      ['Credit', 'Top up', null, '200.0000', '1200.0000'],
      ['Fee', 'Transaction fee', '2.5000', null, '1197.5000'],
      ['Debit', 'Groceries', '75.2500', null, '1122.2500'],
      ['Fee', 'Transaction fee', '2.5000', null, '1119.7500'],
      ['Transfer out', 'Rent share', '120.0000', null, '999.7500'],
      ['Fee', 'Transaction fee', '2.5000', null, '997.2500'],
      ['Transfer in', 'Refund', null, '40.5000', '1037.7500'],
      ['Reversal', 'Groceries returned', null, '75.2500', '1113.0000'],
      ['Fee', 'Transaction fee refunded', null, '2.5000', '1115.5000'],
    ]);
    const linesOf = [2, 2, 2, 1, 2];
    let line = 0;
    expected.forEach((record, i) => {
      const own = rows.slice(line, line + linesOf[i]);
      line += linesOf[i];
      for (const row of own) {
        expect(row.id).toBe(record.transaction_id);
        expect(row.reference).toBe(record.source_transaction_id ?? '');
        expect(row.date.getTime()).toBeGreaterThanOrEqual(periodStart.getTime() - 1000); // date cells are whole seconds
        expect(row.date.getTime()).toBeLessThanOrEqual(periodEnd.getTime() + 1000);
      }
      // The posting's last line shows the ledger's running balance after it.
      expect(own[own.length - 1].balance).toBe(new Money(record.current_balance).toFixed(4));
    });
    expect(expected.slice(0, 4).every((r) => r.source_transaction_id)).toBe(true);
    // KES has 2 minor-unit digits: the cells keep the exact values, the sheet shows them with 2 decimals.
    expect([...amountFormats]).toEqual(['#,##0.00']);

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
    expect(labels.get('Lines')).toBe(rows.length);
    expect(title).toBe('Paygate - Account statement');
    expect(labels.get('Issued by')).toBe('Paygate');
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
    const pages = pdfPages(pdf);
    expect(pages).toHaveLength(1);
    const text = pages[0];
    const all = text.join('\n');
    expect(all).toContain('Paygate - Account statement');
    expect(text).toContain(walletA.account_number);
    expect(text).toContain('Jane Wanjiru');
    expect(text).toContain('1,000.00 KES'); // opening balance, in KES minor units
    expect(text).toContain('1,115.50 KES'); // closing balance
    expect(all).toContain('rounded half-up');
    for (const record of expected) {
      const lines = text.filter((t) => t.includes(record.transaction_id));
      expect(lines.length).toBeGreaterThanOrEqual(1);
      if (record.source_transaction_id) for (const l of lines) expect(l).toContain(record.source_transaction_id.slice(0, 19));
      expect(lines[lines.length - 1].trimEnd().endsWith(` ${displayKes(record.current_balance)}`)).toBe(true);
    }
    const line = (source: string, narration: string) => text.find((t) => t.includes(` ${source} `) && t.includes(narration));
    expect(line('Credit', 'Top up')).toMatch(/ 200\.00 +1,200\.00$/);
    expect(line('Fee', 'Transaction fee refunded')).toMatch(/ 2\.50 +1,115\.50$/);
    expect(line('Transfer out', 'Rent share')).toMatch(/ 120\.00 +999\.75$/);
    expect(line('Transfer in', 'Refund')).toBeDefined();
    expect(line('Reversal', 'Groceries returned')).toBeDefined();
    expect(all).not.toMatch(/INTERNAL_|EXTERNAL_/);
    expect(text.filter((t) => /^Paygate - account statement \d+$/.test(t))).toHaveLength(1);
    expect(text).toContain('Page 1 of 1');
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
    expect(rows).toHaveLength(1 + 9 + 2); // the funding, the period's nine lines, the late credit and its fee
    expect(rows[0]).toMatchObject({
      credit: '1000.0000',
      balance: '1000.0000',
      source: 'Credit',
      narration: 'Wallet funding',
      reference: '',
    });
    expect(money(labels.get('Closing balance'))).toBe(rows[rows.length - 1].balance);
  });

  it("shows a wallet transaction at its own time, the transaction_date the API returns, not the posting's booking time", async () => {
    // A credit dated by the merchant makes the two times seconds apart (undated, they are milliseconds apart).
    const credit = await http()
      .post('/api/v1/transactions')
      .query({ command: 'CREDIT' })
      .set('authorization', tenant.auth)
      .send({
        account_number: walletB.account_number,
        client_code: tenant.clientCode,
        client_service_code: serviceCode,
        transaction_amount: 30,
        currency: 'KES',
        source_transaction_id: uniqueCode('S'),
        transaction_date: '2025-06-30T23:59:58Z',
      })
      .expect(201);
    expect(credit.body.transaction_date).toBe('2025-06-30T23:59:58.000Z');
    const today = new Date().toISOString().slice(0, 10);
    const query = { account_number: walletB.account_number, start_date: today, end_date: today };

    const { rows } = await readWorkbook((await statement({ ...query, doc_type: 'EXCEL' }).expect(200)).body);
    const own = rows.filter((r) => r.id === credit.body.transaction_id);
    expect(own).toHaveLength(2); // the credit and its fee
    for (const row of own) expect(row.date.toISOString()).toBe(credit.body.transaction_date);

    const pdf = pdfPages((await statement({ ...query, doc_type: 'PDF' }).expect(200)).body).flat();
    const lines = pdf.filter((t) => t.includes(credit.body.transaction_id));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toContain('2025-06-30 23:59:58');
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

describe('account statements: minor units, page numbering and the issuer on every page', () => {
  const ROWS = 90;
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallet: { account_number: string };
  let restoreEnv: () => void;

  beforeAll(async () => {
    restoreEnv = withEnv({ ISSUER_NAME: 'Acme Payments Ltd' });
    app = await createTestApp();
    tenant = await createTenant(app);
    wallet = await createWallet(app, tenant, { currency: 'UGX', account_name: 'Kampala float' });
    // UGX has no minor unit: 1234.5 is shown as 1,235 (half-up), the running balances 2,469, 3,704, …
    for (let i = 0; i < ROWS; i++) await app.get(MoneyMovementsService).fund(tenant.clientId, wallet.account_number, new Money('1234.5'));
  });
  afterAll(async () => {
    await app.close();
    restoreEnv();
  });

  const download = (docType: 'PDF' | 'EXCEL') =>
    request(app.getHttpServer())
      .get(DOC)
      .query({ account_number: wallet.account_number, start_date: '2000-01-01', end_date: '2100-01-01', doc_type: docType })
      .set('authorization', tenant.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);

  it('numbers every PDF page "Page X of N" with the issuer on each, and shows UGX without decimals', async () => {
    const pdf: Buffer = (await download('PDF')).body;
    const pages = pdfPages(pdf);
    expect(pages.length).toBe(3); // 90 lines: the first page holds fewer (header block), the summary fits on the last
    expect(pdf.toString('latin1').match(/\/Type \/Page\b/g)).toHaveLength(3);
    pages.forEach((texts, i) => {
      expect(texts).toContain(`Acme Payments Ltd - account statement ${wallet.account_number}`);
      expect(texts).toContain(`Page ${i + 1} of ${pages.length}`);
    });
    const all = pages.flat();
    expect(all[0]).toBe('Acme Payments Ltd - Account statement');
    const rows = all.filter((t) => t.includes(' Credit ') && t.includes('Wallet funding'));
    expect(rows).toHaveLength(ROWS);
    expect(rows[0]).toMatch(/ 1,235 +1,235$/);
    expect(rows[1]).toMatch(/ 1,235 +2,469$/);
    expect(rows[2]).toMatch(/ 1,235 +3,704$/); // 3,703.5 rounded half-up
    expect(all).toContain('111,105 UGX'); // closing balance 90 × 1234.5
    expect(all.join('\n')).toContain('Amounts in UGX are shown with 0 decimals');
  });

  it('gives the XLSX amounts the UGX number format and keeps their exact values', async () => {
    const { rows, amountFormats, labels, money, title } = await readWorkbook((await download('EXCEL')).body);
    expect(title).toBe('Acme Payments Ltd - Account statement');
    expect(labels.get('Issued by')).toBe('Acme Payments Ltd');
    expect([...amountFormats]).toEqual(['#,##0']);
    expect(rows).toHaveLength(ROWS);
    expect(rows[2]).toMatchObject({ credit: '1234.5000', balance: '3703.5000', source: 'Credit' });
    expect(money(labels.get('Closing balance'))).toBe('111105.0000');
  });
});

/**
 * On Citus a posting's id comes from the sequence of the node that writes it: a worker's copy counts from its group
 * << 48, the coordinator's from 1, so ids do not follow the order postings were applied to an account. Here some
 * fundings' postings are given the ids a worker of group 1 would have given them, and the statement still follows the
 * account's own order. (The ids are moved rather than the sequence: the run's database is shared by test files
 * running at once, whose postings would get them too.)
 */
describe('account statements: in the order postings were applied, whatever their ids', () => {
  /** The first id of a worker node of group 1. */
  const WORKER_IDS = '281474976710656';
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallet: { account_number: string };
  let periodStart: Date;
  let periodEnd: Date;

  const fund = (amount: string, narration: string) =>
    app.get(MoneyMovementsService).fund(tenant.clientId, wallet.account_number, new Money(amount), narration);

  /** A funding whose postings get ids in the worker's range, above those of every posting that follows it. */
  async function fundOnWorker(amount: string, narration: string) {
    const record = await fund(amount, narration);
    await dataSource(app).query(
      `UPDATE postings p SET id = p.id + $3::bigint
         FROM wallet_transactions t JOIN wallet_operations o ON o.client_id = t.client_id AND o.id = t.operation_id
        WHERE t.client_id = $1 AND t.id = $2 AND p.client_id = o.client_id AND p.entry_id = o.entry_id`,
      [tenant.clientId, record.transaction_id, WORKER_IDS],
    );
  }

  /** The wallet's postings in id order, by narration: what ordering by id would list. */
  const byId = async () =>
    (
      await dataSource(app).query(
        `SELECT t.transaction_narration AS narration FROM postings p
           JOIN wallet_operations o ON o.client_id = p.client_id AND o.entry_id = p.entry_id
           JOIN wallet_transactions t ON t.client_id = o.client_id AND t.operation_id = o.id AND t.account_id = p.account_id
           JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
          WHERE p.client_id = $1 AND a.account_number = $2
          ORDER BY p.id`,
        [tenant.clientId, wallet.account_number],
      )
    ).map((r: { narration: string }) => r.narration);

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app);
    wallet = await createWallet(app, tenant);
    await fund('100', 'Before, coordinator');
    await fundOnWorker('200', 'Before, worker');
    await sleep(30);
    periodStart = new Date();
    await sleep(30);
    await fund('300', 'First, coordinator');
    await fundOnWorker('400', 'Second, worker');
    await fund('500', 'Third, coordinator');
    await sleep(30);
    periodEnd = new Date();
    expect(await byId()).toEqual(['Before, coordinator', 'First, coordinator', 'Third, coordinator', 'Before, worker', 'Second, worker']);
  });
  afterAll(async () => app.close());

  const download = (docType: 'PDF' | 'EXCEL') =>
    request(app.getHttpServer())
      .get(DOC)
      .query({
        account_number: wallet.account_number,
        start_date: periodStart.toISOString(),
        end_date: periodEnd.toISOString(),
        doc_type: docType,
      })
      .set('authorization', tenant.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);

  it('XLSX: opens on the balance after the last posting before the period, then its postings in order, balances running', async () => {
    const { labels, rows, money } = await readWorkbook((await download('EXCEL')).body);
    expect(money(labels.get('Opening balance'))).toBe('300.0000');
    expect(rows.map((r) => [r.narration, r.credit, r.balance])).toEqual([
      ['First, coordinator', '300.0000', '600.0000'],
      ['Second, worker', '400.0000', '1000.0000'],
      ['Third, coordinator', '500.0000', '1500.0000'],
    ]);
    expect(money(labels.get('Closing balance'))).toBe('1500.0000');
  });

  it('PDF: the same opening, lines and closing', async () => {
    const text = pdfPages((await download('PDF')).body).flat();
    expect(text).toContain('300.00 KES');
    expect(text).toContain('1,500.00 KES');
    const lines = text.filter((t) => t.includes(' Credit ') && /, (coordinator|worker)/.test(t));
    expect(lines.map((t) => [/\w+, \w+/.exec(t)?.[0], /[\d,.]+$/.exec(t.trimEnd())?.[0]])).toEqual([
      ['First, coordinator', '600.00'],
      ['Second, worker', '1,000.00'],
      ['Third, coordinator', '1,500.00'],
    ]);
    expect(text.join('\n')).not.toContain('Before,');
  });
});
