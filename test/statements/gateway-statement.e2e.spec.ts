import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { pdfText, readWorkbook, settlementStatement } from '../support/statement-readers';

/**
 * The statement of a settlement wallet: collections settle into it net of the merchant's fee in one posting, and a
 * collection reversal undoes that posting, fee included. The statement shows each as the movement at its full
 * amount and the fee on its own line, with the merchant's references and readable sources.
 */
describe('account statement of a settlement wallet (collections and their reversals)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  const chargeReference = `ext-${randomUUID()}`;
  const reversalReference = `rev-${randomUUID()}`;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '300' });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app); // FIXED fee 10
    const gw = gateway(app, merchant.token);
    const body = chargeBody(merchant, { external_reference: chargeReference, amount: '100', description: 'Order S-1' });
    const charged = await gw.post('/v1/mobile-money/charge').send(body);
    expect(charged.status).toBe(200);
    await waitForPaymentStatus(app, merchant, charged.body.charge_request_id, 700);
    const reversal = { reversal_reference: reversalReference, payment_reference: chargeReference, reversal_reason: 'Goods returned' };
    expect((await gw.post('/v1/reversals/initiate').send(reversal)).status).toBe(200);
    await waitFor('the reversal to succeed', async () => {
      const res = await gw.get(`/v1/reversals/${reversalReference}/status`);
      return res.body.reversal_status === 'successful';
    });
  });
  afterAll(async () => sandbox?.close());

  const statement = (docType: 'PDF' | 'EXCEL') => settlementStatement(app, merchant, docType);

  it('XLSX: the collection and its reversal at full amount, each fee on its own line, with references', async () => {
    const { rows } = await readWorkbook((await statement('EXCEL')).body);
    expect(rows.map((r) => [r.source, r.reference, r.narration, r.debit, r.credit, r.balance])).toEqual([
      ['Collection', chargeReference, 'Order S-1', null, '100.0000', '100.0000'],
      ['Fee', chargeReference, 'Transaction fee', '10.0000', null, '90.0000'],
      ['Collection reversal', reversalReference, 'Goods returned', '100.0000', null, '-10.0000'],
      ['Fee', reversalReference, 'Transaction fee refunded', null, '10.0000', '0.0000'],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(1); // both records name the payment
  });

  it('PDF: the same lines, with readable sources and KES amounts', async () => {
    const text = pdfText((await statement('PDF')).body);
    const line = (source: string) => text.filter((t) => t.includes(` ${source} `));
    expect(line('Collection')[0]).toMatch(/ 100\.00 +100\.00$/);
    expect(line('Collection reversal')[0]).toMatch(/ 100\.00 +-10\.00$/);
    expect(line('Fee')).toHaveLength(2);
    expect(text.join('\n')).not.toMatch(/PAYMENT|COLLECTION_REVERSAL/);
  });
});
