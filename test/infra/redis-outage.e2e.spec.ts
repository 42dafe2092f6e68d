import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import {
  chargeBody,
  createGatewayMerchant,
  finishedCallbackLog,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  MerchantReceiver,
  portAnswers,
  sleep,
  startIsolatedSandbox,
  stopClaiming,
  stopRelaying,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';
import { SETTLE_PAYMENT_KEY, TOPICS } from '../../src/infra/queue/queues';

/** Short, so that the lost-job sweeper's work is seen in seconds (production default: 2 minutes). */
const LOST_JOB_AFTER_MS = 3000;

/**
 * Losing Redis loses no money and no callback (provider contract §1): work is written to the Postgres outbox in
 * the transaction of the state change; the money paths' work is claimed from there by the workers, so while Redis is
 * away charges are accepted, settled and called back, and work whose worker died is offered again by the sweeper.
 */
describe('Redis outage', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let expectedSettlement: Decimal;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: '100',
      CALLBACK_RETRY_DELAYS_MS: '500,1000,1500',
      OUTBOX_LOST_JOB_AFTER_MS: String(LOST_JOB_AFTER_MS),
    });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
    expectedSettlement = new Decimal(0);
  });
  afterAll(async () => sandbox?.close());

  async function postCharge(amount: number) {
    const body = chargeBody(merchant, { callback_url: receiver.url(), amount });
    const started = Date.now();
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    return { res, ms: Date.now() - started, reference: body.external_reference as string, url: body.callback_url as string };
  }

  async function statuses(ids: number[]): Promise<number[]> {
    const rows = await dataSource(app).query(`SELECT payment_status FROM payments WHERE id = ANY($1) ORDER BY id`, [ids]);
    return rows.map((r: { payment_status: number }) => r.payment_status);
  }

  /** Every charge settled (700) and its one callback acknowledged, each received exactly once. */
  async function expectAllSettledAndCalledBack(charges: Array<{ id: number; reference: string; url: string }>) {
    await waitFor(
      'every charge to settle and every callback to arrive',
      async () =>
        (await statuses(charges.map((c) => c.id))).every((s) => s === 700) && charges.every((c) => receiver.at(c.url).length >= 1),
      30_000,
      100,
    );
    await sleep(500);
    for (const c of charges) {
      expect(receiver.at(c.url)).toHaveLength(1);
      expect(receiver.at(c.url)[0].body).toMatchObject({ external_reference: c.reference, payment_status: '700' });
      const log = await finishedCallbackLog(app, merchant, c.reference);
      expect(log.deliveries.map((d) => d.status)).toEqual(['DELIVERED']);
    }
    // One entry per payment: the wallet holds exactly the sum of what was collected, net of the fee of 10.
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(expectedSettlement.toFixed(4));
    const [entries] = await dataSource(app).query(
      `SELECT count(*)::int AS n, count(DISTINCT entry_id)::int AS distinct_entries FROM payments WHERE client_id = $1 AND entry_id IS NOT NULL`,
      [merchant.clientId],
    );
    expect(entries.n).toBe(entries.distinct_entries);
  }

  it('works before the outage', async () => {
    const c = await postCharge(110);
    expect(c.res.status).toBe(200);
    expectedSettlement = expectedSettlement.plus(100);
    await expectAllSettledAndCalledBack([{ id: c.res.body.charge_request_id, reference: c.reference, url: c.url }]);
  });

  it('charges posted while Redis is down are accepted at once, wait in the outbox, and settle and call back once it is back', async () => {
    await sandbox.redis.stop();

    const charges: Array<{ id: number; reference: string; url: string }> = [];
    for (let i = 0; i < 8; i++) {
      const c = await postCharge(100 + i);
      expect(c.res.status).toBe(200);
      expect(c.res.body).toMatchObject({ status_code: 176, next_step: null });
      // Accepted without waiting on Redis.
      expect(c.ms).toBeLessThan(2000);
      charges.push({ id: c.res.body.charge_request_id, reference: c.reference, url: c.url });
      expectedSettlement = expectedSettlement.plus(90 + i);
    }
    // Status queries and metrics still answer.
    const status = await gateway(app, merchant.token).get(`/v1/transaction/${charges[0].id}/status`);
    expect(status.status).toBe(200);
    expect((await request(app.getHttpServer()).get('/metrics')).status).toBe(200);

    // Settlements are BullMQ jobs: they wait in the outbox, unrelayed, while Redis is away, and none is lost.
    await sleep(2000);
    expect(await portAnswers(sandbox.redis.port)).toBe(false); // still down throughout
    expect(await statuses(charges.map((c) => c.id))).toEqual(Array(charges.length).fill(703));
    await sandbox.redis.start();
    await expectAllSettledAndCalledBack(charges);
  });

  it('work relayed and then lost before a worker finished it is relayed again by the sweep, and completes exactly once', async () => {
    // The relay and the worker stop while the charges are posted, so every settlement waits unrelayed in the outbox.
    const startRelaying = await stopRelaying(app);
    const startClaiming = await stopClaiming(app);
    const charges: Array<{ id: number; reference: string; url: string }> = [];
    for (let i = 0; i < 5; i++) {
      const c = await postCharge(200 + i);
      expect(c.res.status).toBe(200);
      charges.push({ id: c.res.body.charge_request_id, reference: c.reference, url: c.url });
      expectedSettlement = expectedSettlement.plus(190 + i);
    }
    // A worker claims the settlements and dies before finishing them: their rows stay claimed and not done.
    const ids = charges.map((c) => String(c.id));
    const lost: string[] = (
      await dataSource(app).query(
        `UPDATE outbox SET relayed_at = now() WHERE relayed_at IS NULL AND topic = $2 AND payload->>$3 = ANY($1)
         RETURNING payload->>$3 AS id`,
        [ids, TOPICS.settlePayment, SETTLE_PAYMENT_KEY],
      )
    )[0].map((r: { id: string }) => r.id);
    expect(lost.sort()).toEqual([...ids].sort());
    startRelaying();
    startClaiming();
    await sleep(LOST_JOB_AFTER_MS / 2);
    expect(await statuses(lost.map(Number))).toEqual(Array(lost.length).fill(703));

    await expectAllSettledAndCalledBack(charges);
    // Recovered by the sweeper: each lost row was offered a second time, and then finished.
    const relays = await dataSource(app).query(`SELECT relay_count, done_at FROM outbox WHERE topic = $2 AND payload->>$3 = ANY($1)`, [
      lost,
      TOPICS.settlePayment,
      SETTLE_PAYMENT_KEY,
    ]);
    expect(relays).toHaveLength(lost.length);
    for (const r of relays) expect(r).toEqual({ relay_count: 1, done_at: expect.any(Date) });
  });

  it('a BullMQ job that Redis lost after its relay (a collection reversal) is relayed again and completes exactly once', async () => {
    const c = await postCharge(300);
    expect(c.res.status).toBe(200);
    await waitFor('the charge to settle', async () => (await statuses([c.res.body.charge_request_id]))[0] === 700, 30_000, 100);
    const walletBefore = await ledgerBalance(app, merchant.settlementAccountNumber);

    // Redis goes away with the reversal's job in it: the relay had handed the job over (relayed_at stamped), and the
    // Redis that held it restarts empty.
    await sandbox.redis.stop();
    const reference = `rev-${c.reference}`;
    const accepted = await gateway(app, merchant.token)
      .post('/v1/reversals/initiate')
      .send({ reversal_reference: reference, payment_reference: c.reference, reversal_reason: 'Lost with Redis' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.reversal_status).toBe('pending');
    const relayed: Array<{ id: string }> = (
      await dataSource(app).query(
        `UPDATE outbox SET relayed_at = now() WHERE topic = 'reversals.process' AND relayed_at IS NULL AND done_at IS NULL
         RETURNING id`,
      )
    )[0];
    expect(relayed).toHaveLength(1);
    await sandbox.redis.start();

    const final = await waitFor(
      'the reversal to finish',
      async () => {
        const res = await gateway(app, merchant.token).get(`/v1/reversals/${encodeURIComponent(reference)}/status`);
        return res.status === 200 && res.body.reversal_status === 'successful' ? res.body : undefined;
      },
      30_000,
      200,
    );
    expect(final).toMatchObject({ reversal_reference: reference, reversal_status: 'successful' });
    // Relayed a second time by the sweep for lost work, then done; the payment's entry undone once.
    const [row] = await dataSource(app).query(`SELECT relay_count, done_at FROM outbox WHERE id = $1`, [relayed[0].id]);
    expect(row).toEqual({ relay_count: 1, done_at: expect.any(Date) });
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe(new Decimal(walletBefore).minus(290).toFixed(4));
    const [reversals] = await dataSource(app).query(
      `SELECT count(*)::int AS n, count(entry_id)::int AS entries FROM collection_reversals WHERE payment_id = $1`,
      [c.res.body.charge_request_id],
    );
    expect(reversals).toEqual({ n: 1, entries: 1 });
  });
});
