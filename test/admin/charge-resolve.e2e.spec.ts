import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import type { OperatorStatement } from '../../src/rails/operator-statement';
import { ReconciliationRepository } from '../../src/reconciliation/reconciliation.repository';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { cliJson, runCli, SANDBOX } from '../support/disbursement-fixtures';
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
import { operatorRowOfCharge } from '../support/recon-fixtures';
import { dataSource } from '../support/test-app';

/**
 * A jammed charge (704) resolved by a person from the operator's evidence (issue 33): `charge:resolve` settles it
 * through the settlement path a callback takes (one entry, the merchant's callback with the operator's receipt) or
 * fails it without moving money, and `recon:resolve` of a charge row goes the same way.
 */
describe('admin charge:resolve', () => {
  jest.setTimeout(240_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '200', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
  }, 120_000);
  afterAll(async () => sandbox?.close());

  async function jammedCharge(amount: string) {
    const url = sandbox.receiver.url(`/charge-${amount}`);
    const body = chargeBody(merchant, { amount, payer_msisdn: SANDBOX.mobile.jammed, callback_url: url });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    const id = String(res.body.charge_request_id);
    await waitForPaymentStatus(app, merchant, id, 704);
    return { id, url };
  }
  const resolve = (id: string, ...args: string[]) =>
    runCli(sandbox.db.url, 'charge:resolve', '--client', merchant.clientCode, '--id', id, ...args, '--json');
  const entriesOf = async (id: string) =>
    (
      await dataSource(app).query(
        `SELECT e.kind FROM journal_entries e JOIN payments p ON p.client_id = e.client_id AND p.entry_id = e.id WHERE p.id = $1`,
        [id],
      )
    ).map((r: { kind: string }) => r.kind);

  it('settles a jammed charge with the receipt (one entry, the callback), fails another without money, refuses the rest', async () => {
    const paid = await jammedCharge('120');
    const lost = await jammedCharge('130');

    const missingReceipt = await resolve(paid.id, '--status', 'SUCCESSFUL');
    expect([missingReceipt.code, missingReceipt.stdout, missingReceipt.stderr.trim()]).toEqual([
      1,
      '',
      "error: --receipt (the operator's receipt) is required with SUCCESSFUL",
    ]);

    const settled = cliJson(await resolve(paid.id, '--status', 'SUCCESSFUL', '--receipt', 'QJAMMED0001'));
    expect(settled).toMatchObject({ charge_request_id: paid.id, payment_status: 700, payer_transaction_id: 'QJAMMED0001' });
    expect(settled.entry_id).not.toBeNull();
    expect(await entriesOf(paid.id)).toEqual(['PAYMENT']);
    const [callback] = await waitFor('the merchant callback', () =>
      sandbox.receiver.at(paid.url).length ? sandbox.receiver.at(paid.url) : undefined,
    );
    expect(callback.body).toMatchObject({ charge_request_id: paid.id, payment_status: '700', payer_transaction_id: 'QJAMMED0001' });

    const failed = cliJson(await resolve(lost.id, '--status', 'FAILED'));
    expect([failed.payment_status, failed.entry_id]).toEqual([701, null]);
    await waitFor('the failure callback', () => (sandbox.receiver.at(lost.url).length ? true : undefined));
    expect(sandbox.receiver.at(lost.url)[0].body).toMatchObject({ payment_status: '701' });

    const again = await resolve(paid.id, '--status', 'FAILED');
    expect([again.code, again.stderr.trim()]).toEqual([
      1,
      `error: charge ${paid.id} is not jammed (status 700): only a jammed charge is resolved by hand`,
    ]);
    const unknown = await resolve('999999', '--status', 'FAILED');
    expect(unknown.stderr.trim()).toBe('error: charge 999999 not found for this client');
    expect((await verifyLedger(dataSource(app).manager)).flatMap((r) => r.violations)).toEqual([]);
    expect(sandbox.receiver.at(paid.url)).toHaveLength(1);
  });

  it('resolves a reconciliation row of a jammed charge through the same path, the entry recorded on the row', async () => {
    const jammed = await jammedCharge('140');
    const [payment] = await dataSource(app).query(`SELECT * FROM payments WHERE id = $1`, [jammed.id]);
    // M-Pesa's statement lists the charge as paid: our status query cannot settle a jammed charge, so it stays open.
    const statement: OperatorStatement = {
      rail: 'mpesa',
      movements: async () => [
        operatorRowOfCharge(payment, { operatorReference: 'QRECON0001', ourReference: null, evidence: { TransID: 'QRECON0001' } }),
      ],
      balance: async () => ({ amount: new Decimal(0), currency: 'KES', at: new Date(), evidence: {} }),
    };
    const period = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
    const run = await app.get(ReconciliationService).run('mpesa', period, 'test', statement);
    const row = (await app.get(ReconciliationRepository).rowsOf(run.id, true)).find((r) => r.our_record_id === jammed.id)!;
    expect([row.outcome, row.our_status, row.state]).toEqual(['STATUS_MISMATCH', 'PENDING', 'OPEN']);

    const noReceipt = await runCli(
      sandbox.db.url,
      'recon:resolve',
      '--id',
      row.id,
      '--note',
      'M-Pesa statement',
      '--status',
      'SUCCESSFUL',
      '--json',
    );
    expect(noReceipt.stderr.trim()).toBe("error: --receipt (the operator's receipt) is required with SUCCESSFUL");
    const resolved = cliJson(
      await runCli(
        sandbox.db.url,
        'recon:resolve',
        '--id',
        row.id,
        '--note',
        'M-Pesa statement row QRECON0001',
        '--by',
        'alice',
        '--status',
        'SUCCESSFUL',
        '--receipt',
        'QRECON0001',
        '--json',
      ),
    );
    expect([resolved.state, resolved.resolved_by, resolved.moved_money]).toEqual(['RESOLVED', 'alice', true]);
    const [after] = await dataSource(app).query(`SELECT payment_status, entry_id::text, payer_transaction_id FROM payments WHERE id = $1`, [
      jammed.id,
    ]);
    expect(after).toEqual({ payment_status: 700, entry_id: resolved.resolution_entry_id, payer_transaction_id: 'QRECON0001' });
    expect(await entriesOf(jammed.id)).toEqual(['PAYMENT']);
    expect((await verifyLedger(dataSource(app).manager)).flatMap((r) => r.violations)).toEqual([]);
  });
});
