import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { verifySignature } from '../support/callback-signature';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  freePort,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  sleep,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';

const DELAYS = [300, 600, 900];
/** Scheduling slack: relay polling, queue hand-off, the attempt itself. */
const SLACK_MS = 120;
/** How the API prints a time: ISO 8601 in UTC with milliseconds, as JSON prints a Date. */
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Callback retries (collection document §6, provider contract §6): a callback not acknowledged with a 2xx is
 * retried 3 times at CALLBACK_RETRY_DELAYS_MS after the first attempt, under one X-Event-Id, then marked failed;
 * every attempt is recorded and visible to the merchant.
 */
describe('callback delivery retries', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: DELAYS.join(',') });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  async function chargeTo(url: string) {
    const body = chargeBody(merchant, { callback_url: url });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    return { reference: body.external_reference as string, id: res.body.charge_request_id as number };
  }

  async function finalDelivery(reference: string) {
    return waitFor(
      `the delivery of ${reference} to finish`,
      async () => {
        const log = await callbackLog(app, merchant, reference);
        return log.deliveries.length === 1 && log.deliveries[0].status !== 'PENDING' ? log.deliveries[0] : undefined;
      },
      10_000,
    );
  }

  it('500 twice then 200: exactly three deliveries of the same bytes under one event id, then DELIVERED', async () => {
    const url = receiver.url();
    receiver.failFor(url, 2);
    const { reference, id } = await chargeTo(url);
    const delivery = await finalDelivery(reference);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 3, next_attempt_at: null, completed_at: expect.any(String) });
    expect(delivery.acknowledgement).toMatchObject({ acknowledgement_code: '900', payment_id: String(id) });

    const calls = receiver.at(url);
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.headers['x-event-id']))).toEqual(new Set([delivery.event_id]));
    expect(new Set(calls.map((c) => c.rawBody)).size).toBe(1);
    for (const call of calls)
      expect(verifySignature(merchant.signingSecret, call.rawBody, call.headers['x-signature'] as string)).toBe(true);
    // Retries follow the schedule, counted from the first attempt.
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(DELAYS[0] - SLACK_MS);
    expect(calls[2].at - calls[0].at).toBeGreaterThanOrEqual(DELAYS[1] - SLACK_MS);

    expect(delivery.attempt_log).toEqual([
      {
        attempt: 1,
        attempted_at: expect.stringMatching(ISO_UTC),
        http_status: 500,
        latency_ms: expect.any(Number),
        error: expect.stringContaining('500'),
        replay: false,
      },
      {
        attempt: 2,
        attempted_at: expect.stringMatching(ISO_UTC),
        http_status: 500,
        latency_ms: expect.any(Number),
        error: expect.stringContaining('500'),
        replay: false,
      },
      {
        attempt: 3,
        attempted_at: expect.stringMatching(ISO_UTC),
        http_status: 200,
        latency_ms: expect.any(Number),
        error: null,
        replay: false,
      },
    ]);
    for (const attempt of delivery.attempt_log) expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);

    // Acknowledged: nothing more is sent.
    await sleep(DELAYS[2] + 300);
    expect(receiver.at(url)).toHaveLength(3);
  });

  it('always 500: the first attempt plus 3 retries, then FAILED and nothing more', async () => {
    const url = receiver.url();
    receiver.failFor(url, Infinity);
    const { reference } = await chargeTo(url);
    const delivery = await finalDelivery(reference);
    expect(delivery).toMatchObject({
      status: 'FAILED',
      attempts: 4,
      next_attempt_at: null,
      acknowledgement: null,
      completed_at: expect.any(String),
    });
    expect(delivery.attempt_log.map((a: { attempt: number; http_status: number }) => [a.attempt, a.http_status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
    ]);
    for (const attempt of delivery.attempt_log) {
      expect(attempt).toEqual({
        attempt: expect.any(Number),
        attempted_at: expect.stringMatching(ISO_UTC),
        http_status: 500,
        latency_ms: expect.any(Number),
        error: expect.any(String),
        replay: false,
      });
    }
    const calls = receiver.at(url);
    expect(calls).toHaveLength(4);
    expect(new Set(calls.map((c) => c.headers['x-event-id'])).size).toBe(1);
    expect(calls[3].at - calls[0].at).toBeGreaterThanOrEqual(DELAYS[2] - SLACK_MS);

    await sleep(800);
    expect(receiver.at(url)).toHaveLength(4);
    expect((await callbackLog(app, merchant, reference)).deliveries[0].attempts).toBe(4);
  });

  it('an unreachable receiver: every attempt is recorded with its error and no HTTP status, then FAILED', async () => {
    const closedPort = await freePort();
    const { reference } = await chargeTo(`http://127.0.0.1:${closedPort}/callback`);
    const delivery = await finalDelivery(reference);
    expect(delivery.status).toBe('FAILED');
    expect(delivery.attempt_log).toHaveLength(4);
    for (const attempt of delivery.attempt_log) {
      expect(attempt.http_status).toBeNull();
      expect(attempt.error).toEqual(expect.stringMatching(/\S/));
      expect(attempt.latency_ms).toEqual(expect.any(Number));
    }
  });

  it('a receiver that recovers within the schedule gets the callback on the first retry', async () => {
    const url = receiver.url();
    receiver.failFor(url, 1);
    const { reference } = await chargeTo(url);
    const delivery = await finalDelivery(reference);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    expect(delivery.attempt_log.map((a: { http_status: number }) => a.http_status)).toEqual([500, 200]);
    expect(receiver.at(url)).toHaveLength(2);
  });
});
