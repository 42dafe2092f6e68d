import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { airtimeBody, sendAirtime, waitForProcessed } from '../support/airtime-fixtures';
import {
  createPayoutMerchant,
  expectPayoutAnswer,
  mobilePayoutBody,
  PAYOUT_PATHS,
  payoutRow,
  SANDBOX,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';
import { pdfText, readWorkbook, settlementStatement } from '../support/statement-readers';

/**
 * The statement of a float (a settlement wallet that pays out): each payout and each airtime recipient is a line of
 * its own with its transaction id and the merchant's reference, named by what it was ("Payout to" the masked number,
 * "Airtime", "Payout refund", "Airtime refund"), with its fee on a line beside it, as collections show theirs.
 */
describe('account statement of a float (payouts and airtime)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  const paid = { amount: '100', reference: '' };
  const failed = { amount: '50', reference: '' };
  const airtime = { reference: '', correlation: {} as Record<string, string> };
  const ids: Record<string, string> = {};

  async function payout(row: 'ok' | 'failed', amount: string, status: number) {
    const body = mobilePayoutBody(merchant, row, { sender_amount: amount, recipient_amount: amount, payment_description: `Payout ${row}` });
    expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body), 720);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, status);
    ids[row] = String((await payoutRow(app, merchant.clientId, body.payout_reference as string))!.id);
    return body.payout_reference as string;
  }

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100' });
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '1000' }); // FIXED fee 10
    paid.reference = await payout('ok', paid.amount, 700);
    failed.reference = await payout('failed', failed.amount, 701);
    const body = airtimeBody(
      [
        { phone_number: SANDBOX.mobile.ok, amount: '20' },
        { phone_number: SANDBOX.mobile.failed, amount: '30' },
      ],
      { service_code: merchant.serviceCode },
    );
    airtime.reference = body.reference;
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    const results = await waitForProcessed(app, merchant, airtime.reference);
    for (const r of results) airtime.correlation[r.phone_number] = r.correlation_id;
    expect(results.map((r) => r.service_status)).toEqual([602, 603]);
    // The refund of the failed recipient is booked with its status: nothing is left held.
    const [held] = await dataSource(app).query(`SELECT count(*)::int AS n FROM float_holds WHERE client_id = $1 AND status = 'HELD'`, [
      merchant.clientId,
    ]);
    expect(held.n).toBe(0);
  });
  afterAll(async () => sandbox?.close());

  const statement = (docType: 'PDF' | 'EXCEL') => settlementStatement(app, merchant, docType);

  it('XLSX: every payout and recipient with its id, reference, readable source and fee line, balances running', async () => {
    const { rows } = await readWorkbook((await statement('EXCEL')).body);
    const ok = SANDBOX.mobile.ok;
    const bad = SANDBOX.mobile.failed;
    expect(rows.slice(1).map((r) => [r.id, r.reference, r.source, r.narration, r.debit, r.credit, r.balance])).toEqual([
      [ids.ok, paid.reference, 'Payout to 2547*****678', 'Payout ok', '100.0000', null, '900.0000'],
      [ids.ok, paid.reference, 'Fee', 'Transaction fee', '10.0000', null, '890.0000'],
      [ids.failed, failed.reference, 'Payout to 2547*****001', 'Payout failed', '50.0000', null, '840.0000'],
      [ids.failed, failed.reference, 'Fee', 'Transaction fee', '10.0000', null, '830.0000'],
      [ids.failed, failed.reference, 'Payout refund', expect.stringMatching(/\S/), null, '50.0000', '880.0000'],
      [ids.failed, failed.reference, 'Fee', 'Transaction fee refunded', null, '10.0000', '890.0000'],
      [airtime.correlation[ok], airtime.reference, 'Airtime', 'Top-up of 2547*****678', '20.0000', null, '870.0000'],
      [airtime.correlation[ok], airtime.reference, 'Fee', 'Transaction fee', '10.0000', null, '860.0000'],
      [airtime.correlation[bad], airtime.reference, 'Airtime', 'Top-up of 2547*****001', '30.0000', null, '830.0000'],
      [airtime.correlation[bad], airtime.reference, 'Fee', 'Transaction fee', '10.0000', null, '820.0000'],
      [
        airtime.correlation[bad],
        airtime.reference,
        'Airtime refund',
        expect.stringMatching(/^Top-up of 2547\*{5}001: \S/),
        null,
        '30.0000',
        '850.0000',
      ],
      [airtime.correlation[bad], airtime.reference, 'Fee', 'Transaction fee refunded', null, '10.0000', '860.0000'],
    ]);
    expect(JSON.stringify(rows)).not.toContain('Ledger entry');
    expect(JSON.stringify(rows)).not.toMatch(/254712345678|254700000001/); // numbers only masked
  });

  it('PDF: the same lines, with the page count from the same rows (one line per recipient, fees apart)', async () => {
    const text = pdfText((await statement('PDF')).body);
    // The source column is padded: a label is followed by two spaces at least.
    const lines = (source: string) => text.filter((t) => t.includes(` ${source}  `));
    expect(text.filter((t) => t.includes('Payout to 2547*****678'))).toHaveLength(1);
    // References are whole (40 characters wide): a UUID with a prefix is never cut.
    expect(text.filter((t) => t.includes(` ${paid.reference} `))).toHaveLength(2);
    expect(text.filter((t) => t.includes(` ${airtime.reference} `))).toHaveLength(6);
    expect(lines('Airtime')).toHaveLength(2);
    expect(lines('Airtime refund')).toHaveLength(1);
    expect(lines('Fee')).toHaveLength(6);
    expect(text.join('\n')).toMatch(/\nLines\n13\n/);
    expect(text.join('\n')).not.toMatch(/FLOAT_RESERVE|Ledger entry|254712345678/);
  });
});
