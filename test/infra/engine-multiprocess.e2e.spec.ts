import Decimal from 'decimal.js';
import { diagnostics } from '../support/child-processes';
import { cliJson, runCli } from '../support/disbursement-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  GatewayMerchant,
  ledgerBalance,
  postAsMerchant,
  systemBalance,
  waitFor,
} from '../support/gateway-fixtures';
import { ProcessCluster } from '../support/process-cluster';

const CHARGES = 200;
const CONCURRENCY = 20;

/**
 * Several processes on one Postgres and one Redis (provider contract §1): an `api` process and two `worker`
 * processes, all compiled (`node dist/src/main.js <role>`). Every charge settles exactly once, every callback is
 * acknowledged once (sent again only after an attempt recorded as failed), and the ledger invariants hold afterwards
 * (`admin ledger:verify`).
 */
describe('engine: one api and two worker processes', () => {
  const cluster = new ProcessCluster();
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    await cluster.launch({
      workers: 2,
      env: () => ({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '500,1000,1500', DB_POOL_SIZE: '10' }),
    });
    merchant = await createGatewayMerchant(cluster.setup);
  }, 180_000);

  afterAll(async () => cluster.close(), 60_000);

  it(`${CHARGES} charges through the api process all settle exactly once, and the ledger verifies`, async () => {
    const { receiver, setup, apiUrl } = cluster;
    const query = (sql: string, params: unknown[] = []) => cluster.query(sql, params);
    const urls: string[] = [];
    let expectedSettlement = new Decimal(0);
    const bodies = Array.from({ length: CHARGES }, (_, i) => {
      const amount = 20 + (i % 50);
      expectedSettlement = expectedSettlement.plus(amount - 10);
      const body = chargeBody(merchant, {
        amount,
        callback_url: receiver.url(),
      });
      urls.push(body.callback_url as string);
      return body;
    });

    const answers: Array<{ status: number; body: Record<string, unknown> }> = [];
    for (let i = 0; i < bodies.length; i += CONCURRENCY) {
      const batch = await Promise.all(
        bodies.slice(i, i + CONCURRENCY).map((body) => postAsMerchant(apiUrl, merchant.token, '/v1/mobile-money/charge', body)),
      );
      answers.push(...batch);
    }
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(new Set(answers.map((a) => a.body.charge_request_id)).size).toBe(CHARGES);

    const ids = answers.map((a) => String(a.body.charge_request_id));
    try {
      await waitFor(
        'every payment to settle and every callback to arrive',
        async () => {
          const [row] = await query(`SELECT count(*)::int AS n FROM payments WHERE id = ANY($1) AND payment_status = 700`, [ids]);
          return row.n === CHARGES && urls.every((u) => receiver.at(u).length > 0);
        },
        90_000,
        250,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${diagnostics(cluster.processes)}`, {
        cause: error,
      });
    }

    // Exactly once: one journal entry per payment, the settlement wallet holds the expected sum, fee income the fees.
    const [entries] = await query(
      `SELECT count(*)::int AS payments, count(DISTINCT p.entry_id)::int AS entries,
              (SELECT count(*)::int FROM journal_entries e WHERE e.client_id = $1) AS client_entries
       FROM payments p WHERE p.client_id = $1 AND p.entry_id IS NOT NULL`,
      [merchant.clientId],
    );
    expect(entries).toEqual({
      payments: CHARGES,
      entries: CHARGES,
      client_entries: CHARGES,
    });
    expect(await ledgerBalance(setup, merchant.settlementAccountNumber)).toBe(expectedSettlement.toFixed(4));
    expect(await systemBalance(setup, merchant.clientId, 'FEE_INCOME')).toBe(new Decimal(CHARGES * 10).toFixed(4));

    // Every callback acknowledged once, under its own event id, and no copy sent that is not a recorded attempt. A
    // second copy is allowed only after an attempt recorded as failed: a receiver slower than the post's time-out
    // (10 s, seen under CI load) gets the late copy and the retry, as at-least-once delivery promises.
    await waitFor('every delivery to be recorded', async () => {
      const [row] = await query(`SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1 AND status = 'DELIVERED'`, [
        merchant.clientId,
      ]);
      return row.n === CHARGES;
    });
    const deliveries: Array<{ id: string; url: string; attempts: number; acknowledged: number; failed_first: boolean }> = await query(
      `SELECT d.id, d.url, count(*)::int AS attempts, count(*) FILTER (WHERE a.http_status BETWEEN 200 AND 299)::int AS acknowledged,
              bool_or(a.attempt = 1 AND a.error IS NOT NULL) AS failed_first
         FROM callback_deliveries d JOIN callback_attempts a ON a.delivery_id = d.id WHERE d.client_id = $1 GROUP BY d.id, d.url`,
      [merchant.clientId],
    );
    expect(deliveries).toHaveLength(CHARGES);
    for (const delivery of deliveries) {
      const copies = receiver.at(delivery.url);
      expect({ url: delivery.url, acknowledged: delivery.acknowledged }).toEqual({ url: delivery.url, acknowledged: 1 });
      expect(copies.length).toBeGreaterThanOrEqual(1);
      expect(copies.length).toBeLessThanOrEqual(delivery.attempts);
      if (delivery.attempts > 1)
        expect({ url: delivery.url, failedFirst: delivery.failed_first }).toEqual({ url: delivery.url, failedFirst: true });
      expect(new Set(copies.map((copy) => copy.headers['x-event-id']))).toEqual(new Set([delivery.id]));
    }
    await waitFor('every outbox row to be done', async () => {
      const [row] = await query(`SELECT count(*)::int AS n FROM outbox WHERE done_at IS NULL`);
      return row.n === 0;
    });

    // All three processes are still up.
    for (const child of [...cluster.apis, ...cluster.workers])
      expect({ name: child.name, exit: child.process.exitCode }).toEqual({
        name: child.name,
        exit: null,
      });

    const report = cliJson(await runCli(cluster.db.url, 'ledger:verify', '--json')) as {
      ok: boolean;
      invariants: Array<{ name: string; violations: number }>;
    };
    expect(report.ok).toBe(true);
    expect(report.invariants.map((invariant) => invariant.name)).toEqual([
      'a_entries_balance',
      'b_balances_match_postings',
      'c_no_debit_below_floor',
      'd_one_entry_per_business_record',
      'e_postings_numbered_per_account',
    ]);
    for (const invariant of report.invariants) expect(invariant.violations).toBe(0);
  }, 150_000);
});
