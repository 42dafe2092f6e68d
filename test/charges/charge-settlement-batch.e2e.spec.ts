import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { pgPool } from '../../src/infra/database/prepared';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { PaymentSettlementService } from '../../src/collections/payment-settlement.service';
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
 * settlements this test starts run; every charge is settled twice at once (a job relayed twice). A batch the ledger
 * refuses as a whole (one entry names no settlement wallet) is redone item by item inside the same call.
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

  async function charge(m: GatewayMerchant, amount: string): Promise<string> {
    const body = chargeBody(m, { amount, callback_url: sandbox.receiver.url(`/batch/${randomUUID()}`) });
    const res = await gateway(app, m.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    return String(res.body.charge_request_id);
  }

  /** Settles every id twice at once (a job relayed twice); the settled ids, the failed ids and the database calls made. */
  async function settleAll(ids: string[]) {
    const pool = pgPool(dataSource(app));
    const query = jest.spyOn(pool, 'query');
    try {
      const twice = [...ids, ...ids];
      const results = await Promise.allSettled(twice.map((id) => app.get(PaymentSettlementService).settle(id)));
      const calls = query.mock.calls.filter(([config]) => (config as { name?: string }).name === 'collection_settle_payments').length;
      return { failed: twice.filter((_, i) => results[i].status === 'rejected'), calls };
    } finally {
      query.mockRestore();
    }
  }

  async function paymentsOf(ids: string[]) {
    const rows: Array<{ id: string; payment_status: number; entry_id: string | null; deliveries: number }> = await dataSource(app).query(
      `SELECT p.id, p.payment_status, p.entry_id,
         (SELECT count(*)::int FROM callback_deliveries d WHERE d.client_id = p.client_id AND d.reference = p.external_reference) AS deliveries
       FROM payments p WHERE p.id = ANY($1::bigint[]) ORDER BY p.id`,
      [ids],
    );
    return rows;
  }

  async function expectLedgerSound() {
    const violations = (await verifyLedger(dataSource(app).manager)).filter((r) => r.violations.length > 0);
    expect(violations).toEqual([]);
  }

  it(`settles ${CHARGES} charges in a few calls, each exactly once with its own entry and callback`, async () => {
    const amounts = Array.from({ length: CHARGES }, (_, i) => new Decimal(100 + i).plus('0.25').toFixed(2));
    const ids: string[] = [];
    for (let i = 0; i < CHARGES; i += 10) ids.push(...(await Promise.all(amounts.slice(i, i + 10).map((a) => charge(merchant, a)))));
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);
    const feeIncomeBefore = await systemBalance(app, merchant.clientId, 'FEE_INCOME');

    const { failed, calls } = await settleAll(ids);
    expect(failed).toEqual([]);
    // Group commit: 200 settlements of 100 payments in batches, not one call each.
    expect(calls).toBeLessThanOrEqual(10);

    const rows = await paymentsOf(ids);
    expect(rows.map((r) => r.payment_status)).toEqual(Array(CHARGES).fill(700));
    expect(new Set(rows.map((r) => r.entry_id)).size).toBe(CHARGES);
    expect(rows.map((r) => r.deliveries)).toEqual(Array(CHARGES).fill(1));
    const [entries] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1 AND kind = 'PAYMENT'`,
      [merchant.clientId],
    );
    expect(entries.n).toBe(CHARGES);
    // The merchant bears the FIXED fee of 10 on each: the wallet gets the sum of the net amounts, fee income the fees.
    const net = amounts.reduce((sum, a) => sum.plus(a).minus(10), new Decimal(0));
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(net.plus(before).toFixed(4));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(new Decimal(feeIncomeBefore).plus(10 * CHARGES).toFixed(4));
    await expectLedgerSound();
  });

  it('a payment that cannot be settled fails alone; its neighbours in the batch settle', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, () => charge(merchant, '50')));
    // A real failure at settlement: the other merchant's service lost its settlement wallet after acceptance.
    const orphan = await charge(other, '100');
    await dataSource(app).query(`UPDATE client_services SET settlement_account_id = NULL WHERE code = $1`, [other.serviceCode]);
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);

    const { failed } = await settleAll([...ids, orphan]);
    expect(failed).toEqual([orphan, orphan]);
    const rows = await paymentsOf([...ids, orphan]);
    expect(rows.filter((r) => r.id !== orphan).map((r) => [r.payment_status, r.deliveries])).toEqual(Array(10).fill([700, 1]));
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(new Decimal(before).plus(400).toFixed(4));
    // It moved nothing and announced nothing, and settles once its service has a wallet again.
    expect(rows.find((r) => r.id === orphan)).toMatchObject({ payment_status: 703, entry_id: null, deliveries: 0 });
    await dataSource(app).query(`UPDATE client_services SET settlement_account_id = $2 WHERE code = $1`, [
      other.serviceCode,
      other.settlementAccountId,
    ]);
    await app.get(PaymentSettlementService).settle(orphan);
    expect(await ledgerBalance(app, other.settlementAccountNumber)).toBe('90.0000');
    await expectLedgerSound();
  });
});
