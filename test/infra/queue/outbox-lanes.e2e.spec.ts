import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createAirtimeMerchant, airtimeBody, sendAirtime } from '../../support/airtime-fixtures';
import { createPayoutMerchant, mobilePayoutBody, PAYOUT_PATHS } from '../../support/disbursement-fixtures';
import { gateway, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox, waitFor } from '../../support/gateway-fixtures';
import { OUTBOX_CHANNEL } from '../../../src/infra/queue/outbox-relay.service';
import { dataSource } from '../../support/test-app';

/** Long enough that nothing accepted runs until the test makes it due. */
const SETTLE_DELAY_MS = 600_000;

/**
 * Outbox work is fair between kinds of work and merchants: each topic is a lane of its own (its BullMQ queue, bounded
 * in what waits there), so a backlog of one kind, due first, does not hold back the other's work that falls due after it.
 */
describe('outbox lanes: one kind of backlog does not starve another', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let bulk: GatewayMerchant;
  let payer: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS) });
    app = sandbox.app;
    bulk = await createAirtimeMerchant(app, null);
    payer = await createPayoutMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  /**
   * Makes the outbox rows of these topics and payload ids due now, plus `laterMs` (so they queue after older work), and
   * wakes the relay as a write of the rows would (an UPDATE fires no NOTIFY), so it learns their new due time.
   */
  async function makeDue(topic: string, key: string, ids: string[], laterMs = 0): Promise<void> {
    await dataSource(app).query(
      `UPDATE outbox SET available_at = now() + make_interval(secs => $4) WHERE topic = $1 AND payload->>$2 = ANY($3)`,
      [topic, key, ids, laterMs / 1000],
    );
    await dataSource(app).query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
  }

  async function payoutStatus(reference: string): Promise<number> {
    const [row] = await dataSource(app).query(`SELECT status FROM payouts WHERE payout_reference = $1`, [reference]);
    return row.status;
  }

  async function unresolvedRecipients(requestIds: string[]): Promise<number> {
    const [row] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM airtime_recipients WHERE request_id = ANY($1) AND service_status NOT IN (602, 603)`,
      [requestIds],
    );
    return row.n;
  }

  it("a merchant's payout falling due after 10,000 airtime recipients of another is paid while they are still being topped up", async () => {
    const requestIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      // Distinct numbers: a request names each at most once.
      const recipients = Array.from({ length: 1000 }, (_, j) => ({ phone_number: `2547${20000000 + i * 1000 + j}`, amount: 10 }));
      const body = airtimeBody(recipients, { service_code: bulk.serviceCode });
      expect((await sendAirtime(app, bulk, body)).status).toBe(200);
      const [row] = await dataSource(app).query(`SELECT id::text FROM airtime_requests WHERE reference = $1`, [body.reference]);
      requestIds.push(row.id);
    }
    const payout = mobilePayoutBody(payer, 'ok');
    const accepted = await gateway(app, payer.token).post(PAYOUT_PATHS.local).send(payout).expect(200);
    const [{ id: payoutId }] = await dataSource(app).query(`SELECT id::text FROM payouts WHERE payout_reference = $1`, [
      payout.payout_reference,
    ]);
    expect(accepted.body.payout_reference).toBe(payout.payout_reference);

    await makeDue('airtime.process', 'requestId', requestIds);
    await makeDue('payouts.process', 'payoutId', [payoutId], 200);
    await waitFor('the payout to be paid', async () => (await payoutStatus(payout.payout_reference as string)) === 700, 30_000, 50);
    expect(await unresolvedRecipients(requestIds)).toBeGreaterThan(0);

    await waitFor('every recipient to be topped up', async () => (await unresolvedRecipients(requestIds)) === 0, 60_000, 200);
  }, 120_000);

  it('an airtime request falling due after 1,000 payouts of another merchant is topped up while they are still being paid', async () => {
    const references: string[] = [];
    for (let chunk = 0; chunk < 50; chunk++) {
      const bodies = Array.from({ length: 20 }, () => mobilePayoutBody(payer, 'ok'));
      await Promise.all(bodies.map((b) => gateway(app, payer.token).post(PAYOUT_PATHS.local).send(b).expect(200)));
      references.push(...bodies.map((b) => b.payout_reference as string));
    }
    const payoutIds: string[] = (
      await dataSource(app).query(`SELECT id::text FROM payouts WHERE payout_reference = ANY($1)`, [references])
    ).map((r: { id: string }) => r.id);
    const body = airtimeBody([{ phone_number: '254712345678', amount: 10 }], { service_code: bulk.serviceCode });
    expect((await sendAirtime(app, bulk, body)).status).toBe(200);
    const [{ id: requestId }] = await dataSource(app).query(`SELECT id::text FROM airtime_requests WHERE reference = $1`, [body.reference]);

    await makeDue('payouts.process', 'payoutId', payoutIds);
    await makeDue('airtime.process', 'requestId', [requestId], 200);
    await waitFor('the airtime to be topped up', async () => (await unresolvedRecipients([requestId])) === 0, 30_000, 50);
    const [{ n: unpaid }] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM payouts WHERE payout_reference = ANY($1) AND status = 703`,
      [references],
    );
    expect(unpaid).toBeGreaterThan(0);

    await waitFor(
      'every payout to be paid',
      async () => {
        const [{ n }] = await dataSource(app).query(
          `SELECT count(*)::int AS n FROM payouts WHERE payout_reference = ANY($1) AND status = 703`,
          [references],
        );
        return n === 0;
      },
      60_000,
      200,
    );
  }, 120_000);
});
