import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  sleep,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { ALL_QUEUES, settlePaymentJob, TOPICS } from '../../src/infra/queue/queues';
import { airtimeBody, createAirtimeMerchant, sendAirtime, waitForProcessed } from '../support/airtime-fixtures';
import { expectPayoutAnswer, mobilePayoutBody, PAYOUT_PATHS, waitForPayoutStatus } from '../support/disbursement-fixtures';
import { dataSource } from '../support/test-app';

const ADMIN_USERNAME = 'ops-admin';
const ADMIN_PASSWORD = 'a-long-operator-password-42';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format into samples. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

function sample(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** Operators' view of the engine: Prometheus metrics at /metrics and the BullMQ dashboard at /admin/queues. */
describe('engine metrics and the queue dashboard', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: '100',
      CALLBACK_RETRY_DELAYS_MS: '200,200,200',
      ADMIN_USERNAME,
      ADMIN_PASSWORD,
    });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  it('/metrics exposes queue jobs, outbox backlog and callback attempts, and they move with traffic', async () => {
    const okUrl = receiver.url();
    const failingUrl = receiver.url();
    receiver.failFor(failingUrl, Infinity);
    for (const url of [okUrl, okUrl, failingUrl]) {
      await gateway(app, merchant.token)
        .post('/v1/mobile-money/charge')
        .send(chargeBody(merchant, { callback_url: url }))
        .expect(200);
    }
    await waitFor(
      'two acknowledged callbacks and four failed attempts',
      () => receiver.at(okUrl).length === 2 && receiver.at(failingUrl).length === 4,
    );

    const samples = await waitFor('the metrics to show the finished work', async () => {
      const res = await http().get('/metrics').expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const parsed = parseMetrics(res.text);
      const delivered =
        sample(parsed, 'paygate_callback_attempts_total', {
          outcome: 'delivered',
        }) ?? 0;
      const failed =
        sample(parsed, 'paygate_callback_attempts_total', {
          outcome: 'failed',
        }) ?? 0;
      const settled = sample(parsed, 'paygate_claimed_work_total', { topic: 'payments.settle', outcome: 'done' }) ?? 0;
      return delivered >= 2 && failed >= 1 && settled >= 3 ? parsed : undefined;
    });

    expect(
      sample(samples, 'paygate_callback_attempts_total', {
        outcome: 'delivered',
      }),
    ).toBe(2);
    expect(
      sample(samples, 'paygate_callback_attempts_total', {
        outcome: 'retry_scheduled',
      }),
    ).toBe(3);
    expect(sample(samples, 'paygate_callback_attempts_total', { outcome: 'failed' })).toBe(1);
    for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed']) {
      expect(sample(samples, 'paygate_queue_jobs', { queue: TOPICS.settlePayment, state })).toEqual(expect.any(Number));
    }
    // 3 settlements, in BullMQ jobs of groups of them (as many as the relay's rounds found them due); none is left to attempt.
    expect(sample(samples, 'paygate_claimed_work_total', { topic: 'payments.settle', outcome: 'done' })).toBe(3);
    const completed = sample(samples, 'paygate_queue_jobs', { queue: TOPICS.settlePayment, state: 'completed' });
    expect(completed).toBeGreaterThanOrEqual(1);
    expect(completed).toBeLessThanOrEqual(3);
    expect(sample(samples, 'paygate_callbacks_pending', { due: 'now' })).toBe(0);
    expect(sample(samples, 'paygate_callbacks_pending', { due: 'later' })).toBe(0);
    expect(sample(samples, 'paygate_outbox_pending', { due: 'now' })).toEqual(expect.any(Number));
    expect(sample(samples, 'paygate_outbox_pending', { due: 'later' })).toEqual(expect.any(Number));
    // Business records by final status, counted in this sandbox's own database.
    expect(sample(samples, 'paygate_payments', { status: '700' })).toBe(3);
    expect(sample(samples, 'paygate_callback_deliveries', { status: 'DELIVERED' })).toBe(2);
    expect(sample(samples, 'paygate_callback_deliveries', { status: 'FAILED' })).toBe(1);
    expect(sample(samples, 'paygate_rail_oldest_unresolved_seconds', { flow: 'payments' })).toBe(0);
  });

  it('counts HTTP requests and their latency by route pattern and status, never by raw URL', async () => {
    const route = '/v1/transaction/:chargeRequestId/status';
    const count = async (labels: Record<string, string>) =>
      sample(parseMetrics((await http().get('/metrics').expect(200)).text), 'paygate_http_request_duration_seconds_count', labels) ?? 0;
    const before = await count({ method: 'GET', route, status: '404' });
    const unmatchedBefore = await count({ method: 'GET', route: 'unmatched', status: '404' });
    await gateway(app, merchant.token).get('/v1/transaction/999999991/status').expect(404);
    await gateway(app, merchant.token).get('/v1/transaction/999999992/status').expect(404);
    await http().get('/no/such/path/42').expect(404);
    const text = (await http().get('/metrics').expect(200)).text;
    expect(await count({ method: 'GET', route, status: '404' })).toBe(before + 2);
    expect(await count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(unmatchedBefore + 1);
    expect(text).not.toContain('999999991');
    expect(text).not.toContain('/no/such/path');
    expect(text).toMatch(
      /paygate_http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/v1\/transaction\/:chargeRequestId\/status",status="404"\}/,
    );
  });

  it('rail health: a payment the rail leaves jammed shows as the oldest unresolved, and in its status', async () => {
    const charged = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { payer_msisdn: '254700000003', callback_url: receiver.url() }))
      .expect(200);
    await waitForPaymentStatus(app, merchant, charged.body.charge_request_id, 704);
    await sleep(1100);
    const samples = parseMetrics((await http().get('/metrics').expect(200)).text);
    expect(sample(samples, 'paygate_payments', { status: '704' })).toBe(1);
    expect(sample(samples, 'paygate_rail_oldest_unresolved_seconds', { flow: 'payments' })).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'paygate_rail_oldest_unresolved_seconds', { flow: 'payouts' })).toBe(0);
  });

  it('paygate_outbox_pending counts work scheduled for later', async () => {
    // Work scheduled an hour ahead (as a later expiry check would be) waits in the outbox and is counted.
    const before = parseMetrics((await http().get('/metrics').expect(200)).text);
    const later = sample(before, 'paygate_outbox_pending', { due: 'later' }) ?? 0;
    await dataSource(app).query(
      `INSERT INTO outbox (client_id, topic, payload, available_at) VALUES ($1, $2, $3, now() + interval '1 hour')`,
      [merchant.clientId, TOPICS.settlePayment, settlePaymentJob('0')],
    );
    const after = parseMetrics((await http().get('/metrics').expect(200)).text);
    expect(sample(after, 'paygate_outbox_pending', { due: 'later' })).toBe(later + 1);
    await dataSource(app).query(`DELETE FROM outbox WHERE topic = $1 AND payload = $2 AND relayed_at IS NULL`, [
      TOPICS.settlePayment,
      settlePaymentJob('0'),
    ]);
  });

  it('paygate_callbacks_pending counts a callback retry scheduled for later', async () => {
    const before = parseMetrics((await http().get('/metrics').expect(200)).text);
    const later = sample(before, 'paygate_callbacks_pending', { due: 'later' }) ?? 0;
    await dataSource(app).query(
      `INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload, attempts, first_attempt_at, next_attempt_at)
       VALUES ($1, 'collections', 'successful_payment', 'metrics-later', $2, '{}', 1, now(), now() + interval '1 hour')`,
      [merchant.clientId, receiver.url()],
    );
    const after = parseMetrics((await http().get('/metrics').expect(200)).text);
    expect(sample(after, 'paygate_callbacks_pending', { due: 'later' })).toBe(later + 1);
    await dataSource(app).query(`DELETE FROM callback_deliveries WHERE reference = 'metrics-later'`);
  });

  it('counts payouts and airtime top-ups by the status they end in (paygate_payouts, paygate_airtime_recipients)', async () => {
    const counts = async () => {
      const samples = parseMetrics((await http().get('/metrics').expect(200)).text);
      const of = (name: string, status: string) => sample(samples, name, { status }) ?? 0;
      return {
        payouts: { 700: of('paygate_payouts', '700'), 701: of('paygate_payouts', '701'), 703: of('paygate_payouts', '703') },
        airtime: {
          600: of('paygate_airtime_recipients', '600'),
          602: of('paygate_airtime_recipients', '602'),
          603: of('paygate_airtime_recipients', '603'),
        },
      };
    };
    const before = await counts();
    const payer = await createAirtimeMerchant(app, receiver);
    // Two payouts that succeed and one the rail fails (sandbox rails table).
    const payouts = [mobilePayoutBody(payer, 'ok'), mobilePayoutBody(payer, 'ok'), mobilePayoutBody(payer, 'failed')];
    for (const body of payouts) {
      expectPayoutAnswer(await gateway(app, payer.token).post(PAYOUT_PATHS.local).send(body), 720, body.payout_reference as string);
    }
    // One airtime request: two top-ups sent, one failed.
    const airtime = airtimeBody(
      [
        { phone_number: '254712345678', amount: '50' },
        { phone_number: '254722000333', amount: '20' },
        { phone_number: '254700000001', amount: '30' },
      ],
      { service_code: payer.serviceCode },
    );
    expect((await sendAirtime(app, payer, airtime)).status).toBe(200);
    for (const [body, status] of [
      [payouts[0], 700],
      [payouts[1], 700],
      [payouts[2], 701],
    ] as const) {
      await waitForPayoutStatus(app, payer, body.payout_reference as string, status);
    }
    expect((await waitForProcessed(app, payer, airtime.reference)).map((r) => r.service_status)).toEqual([602, 602, 603]);

    // Each counted once, under its final status; none left counted as pending or processing.
    expect(await counts()).toEqual({
      payouts: { 700: before.payouts[700] + 2, 701: before.payouts[701] + 1, 703: before.payouts[703] },
      airtime: { 600: before.airtime[600], 602: before.airtime[602] + 2, 603: before.airtime[603] + 1 },
    });
  });

  describe('/admin/queues', () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

    it('answers 401 with a Basic challenge without credentials', async () => {
      const res = await http().get('/admin/queues');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    });

    it.each([
      ['a wrong password', basic(ADMIN_USERNAME, `${ADMIN_PASSWORD}x`)],
      ['a wrong username', basic('root', ADMIN_PASSWORD)],
      ['a bearer token', 'Bearer abc'],
    ])('answers 401 with %s', async (_name, authorization) => {
      expect((await http().get('/admin/queues').set('authorization', authorization)).status).toBe(401);
    });

    it('the dashboard’s API is protected too', async () => {
      expect((await http().get('/admin/queues/api/queues')).status).toBe(401);
    });

    it('answers 200 with ADMIN_USERNAME / ADMIN_PASSWORD, and shows every queue', async () => {
      const auth = basic(ADMIN_USERNAME, ADMIN_PASSWORD);
      const page = await http().get('/admin/queues').set('authorization', auth);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      const api = await http().get('/admin/queues/api/queues').set('authorization', auth);
      expect(api.status).toBe(200);
      const names = (api.body.queues as Array<{ name: string }>).map((q) => q.name).sort();
      expect(names).toEqual([...ALL_QUEUES].sort());
    });
  });
});
