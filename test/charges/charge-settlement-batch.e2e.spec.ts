import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { PaymentSettlementService } from '../../src/payments/payment-settlement.service';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  startIsolatedSandbox,
  systemBalance,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

const CHARGES = 100;

/**
 * Settlement by group commit (collection_settle_payments): many settlements of one merchant at once go to the
 * database in batches, each payment handled on its own. The settlement jobs are due in an hour, so only the
 * settlements this test starts run; every charge is settled twice at once (a job relayed twice).
 */
describe('settling many charges of one merchant at once', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(3_600_000) });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  async function charge(m: GatewayMerchant, amount: string): Promise<{ id: string; reference: string }> {
    const body = chargeBody(m, { amount, callback_url: sandbox.receiver.url(`/batch/${randomUUID()}`) });
    const res = await gateway(app, m.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    return { id: String(res.body.charge_request_id), reference: body.external_reference as string };
  }

  it('settles each exactly once with its entry and callback; a payment that cannot be settled fails alone', async () => {
    const amounts = Array.from({ length: CHARGES }, (_, i) => new Decimal(100 + i).plus('0.25').toFixed(2));
    const charges: Array<{ id: string; reference: string }> = [];
    for (let i = 0; i < CHARGES; i += 10) charges.push(...(await Promise.all(amounts.slice(i, i + 10).map((a) => charge(merchant, a)))));
    // A real failure at settlement: the other merchant's service lost its settlement wallet after acceptance.
    const orphan = await charge(other, '100');
    const db = dataSource(app);
    await db.query(`UPDATE client_services SET settlement_account_id = NULL WHERE code = $1`, [other.serviceCode]);
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);
    const feeIncomeBefore = await systemBalance(app, merchant.clientId, 'FEE_INCOME');

    const settlement = app.get(PaymentSettlementService);
    const ids = [...charges.map((c) => c.id), orphan.id];
    const results = await Promise.allSettled([...ids, ...ids].map((id) => settlement.settle(id)));

    const rejected = results.flatMap((r, i) => (r.status === 'rejected' ? [[...ids, ...ids][i]] : []));
    expect(rejected).toEqual([orphan.id, orphan.id]);
    const rows: Array<{ id: string; payment_status: number; entry_id: string | null; deliveries: number }> = await db.query(
      `SELECT p.id, p.payment_status, p.entry_id,
         (SELECT count(*)::int FROM callback_deliveries d WHERE d.client_id = p.client_id AND d.reference = p.external_reference) AS deliveries
       FROM payments p WHERE p.id = ANY($1::bigint[]) ORDER BY p.id`,
      [ids],
    );
    const settled = rows.filter((r) => r.id !== orphan.id);
    expect(settled.map((r) => r.payment_status)).toEqual(Array(CHARGES).fill(700));
    expect(new Set(settled.map((r) => r.entry_id)).size).toBe(CHARGES);
    expect(settled.map((r) => r.deliveries)).toEqual(Array(CHARGES).fill(1));
    const [entries] = await db.query(`SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1 AND kind = 'PAYMENT'`, [
      merchant.clientId,
    ]);
    expect(entries.n).toBe(CHARGES);

    // The merchant bears the FIXED fee of 10 on each: the wallet gets the sum of the net amounts, fee income the fees.
    const net = amounts.reduce((sum, a) => sum.plus(a).minus(10), new Decimal(0));
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(net.plus(before).toFixed(4));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(new Decimal(feeIncomeBefore).plus(10 * CHARGES).toFixed(4));

    // The one that failed moved nothing, announced nothing, and settles once its service has a wallet again.
    const [stuck] = rows.filter((r) => r.id === orphan.id);
    expect(stuck).toMatchObject({ payment_status: 703, entry_id: null, deliveries: 0 });
    await db.query(`UPDATE client_services SET settlement_account_id = $2 WHERE code = $1`, [other.serviceCode, other.settlementAccountId]);
    await settlement.settle(orphan.id);
    expect(await ledgerBalance(app, other.settlementAccountNumber)).toBe('90.0000');

    const violations = (await verifyLedger(db.manager)).filter((r) => r.violations.length > 0);
    expect(violations).toEqual([]);
  });
});
