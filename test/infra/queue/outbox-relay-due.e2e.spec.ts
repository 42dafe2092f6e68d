import { getQueueToken } from '@nestjs/bullmq';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { OUTBOX_CHANNEL, OutboxRelay, RELAY_LOCK_KEY } from '../../../src/infra/queue/outbox-relay.service';
import { SETTLE_PAYMENT_KEY, TOPICS } from '../../../src/infra/queue/queues';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  sleep,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../../support/gateway-fixtures';
import { dataSource } from '../../support/test-app';

/** The sandbox operator settles this long after acceptance: the settlement's outbox row is delayed by it. */
const SETTLE_DELAY_MS = 1000;
/** The relay's safety sweep is 30 s away: the payment must settle well before it. */
const PROMPT_MS = 3000;

/**
 * Delayed outbox work runs when it falls due, even when it falls due while the relay's round is under way: the round
 * reads when the next row falls due against the same clock as its read of the due rows, so a row due in between is
 * waited for (here: not at all) instead of being left to the relay's safety sweep. A slow round, as a process's first
 * one, made such a charge wait for the sweep. And due work a full lane cannot take waits for a job to leave the lane:
 * the relay does not run round after round meanwhile (it ran over 400 in 2 s, each a transaction and a Redis count).
 */
describe('outbox relay: due work is handed over when it can be, and only then', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let blocker: Client;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS) });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
    blocker = new Client({ connectionString: sandbox.db.url });
    await blocker.connect();
  });
  afterAll(async () => {
    await blocker?.end();
    await sandbox?.close();
  });

  it('a charge whose settlement falls due while the round waits is settled as soon as the round goes on', async () => {
    // Held here, the relay's lock stops the round the charge's NOTIFY starts, after its transaction began.
    await blocker.query('BEGIN');
    await blocker.query('SELECT pg_advisory_xact_lock($1)', [RELAY_LOCK_KEY]);
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(chargeBody(merchant)).expect(200);
    const paymentId = String(res.body.charge_request_id);
    const round = await waitFor('the relay round to wait on its lock', async () => {
      const { rows } = await blocker.query(
        `SELECT a.xact_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = $1
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [RELAY_LOCK_KEY],
      );
      return rows[0] as { xact_start: Date } | undefined;
    });
    const {
      rows: [row],
    } = await blocker.query(`SELECT available_at FROM outbox WHERE client_id = $1 AND topic = $2 AND payload->>$3 = $4`, [
      merchant.clientId,
      TOPICS.settlePayment,
      SETTLE_PAYMENT_KEY,
      paymentId,
    ]);
    expect(round.xact_start.getTime()).toBeLessThan(row.available_at.getTime());

    // Released once the settlement is due: the round finds nothing due at its start, and the row due since then.
    await sleep(Math.max(0, row.available_at.getTime() - Date.now()) + 200);
    const released = Date.now();
    await blocker.query('COMMIT');
    await waitForPaymentStatus(app, merchant, paymentId, 700, PROMPT_MS);
    expect(Date.now() - released).toBeLessThan(PROMPT_MS);
  });

  it('a full lane waits for a job to finish, not for round after round that finds it full', async () => {
    // Jobs waiting in the lane up to its bound (delayed, so no worker takes them): the lane has no room.
    const queue = app.get<Queue>(getQueueToken(TOPICS.settlePayment), { strict: false });
    const fillers = await Promise.all(
      [0, 1, 2, 3].map((i) => queue.add('filler', { clientId: merchant.clientId, items: [] }, { jobId: `filler-${i}`, delay: 3_600_000 })),
    );
    const rounds = jest.spyOn(app.get(OutboxRelay), 'relayDue');
    try {
      const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(chargeBody(merchant)).expect(200);
      const paymentId = String(res.body.charge_request_id);
      await sleep(SETTLE_DELAY_MS);
      const due = rounds.mock.calls.length;
      await sleep(2000);
      // The round that found the settlement due and the lane full, and at most a wake-up or two of others' work.
      expect(rounds.mock.calls.length - due).toBeLessThanOrEqual(3);
      const pending = await gateway(app, merchant.token).get(`/v1/transaction/${paymentId}/status`).expect(200);
      expect(pending.body.payment_status).not.toBe('700');

      // A job leaving the lane wakes the relay (here: the NOTIFY a write would send), and the settlement goes ahead.
      await Promise.all(fillers.map((job) => job.remove()));
      await dataSource(app).query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
      await waitForPaymentStatus(app, merchant, paymentId, 700, PROMPT_MS);
    } finally {
      rounds.mockRestore();
      await Promise.all(fillers.map((job) => job.remove().catch(() => undefined)));
    }
  });
});
