import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { verifySignature } from '../support/callback-signature';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ReceivedCallback,
  sleep,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';
import { activityView } from '../support/citus-cluster';

const V1 = /v1=[0-9a-f]{64}/g;

function signedAt(callback: ReceivedCallback): number {
  return Number(/^t=(\d+),/.exec(callback.headers['x-signature'] as string)![1]);
}

/**
 * POST /v1/callbacks/{event_id}/replay: the merchant's own deliveries only (others: 404 in the gateway shape, and
 * nothing sent); the same X-Event-Id and body to the URL stored with the delivery, newly signed; one attempt
 * marked as a replay in the log; repeated requests while one waits queue nothing more; after a portal rotation
 * both signatures until the overlap ends.
 */
describe('callback replay API', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '200,300,400' });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  /** A charge whose callback goes to a fresh receiver URL; resolves once the first callback arrived and was recorded. */
  async function deliveredCharge() {
    const url = receiver.url();
    const body = chargeBody(merchant, { callback_url: url });
    await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const reference = body.external_reference as string;
    const [first] = await waitFor('the first callback', () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
    await waitFor(
      'the delivery to be recorded',
      async () => (await callbackLog(app, merchant, reference)).deliveries[0]?.status === 'DELIVERED',
    );
    return { url, reference, first, eventId: first.headers['x-event-id'] as string };
  }

  const replay = (token: string, eventId: string) => gateway(app, token).post(`/v1/callbacks/${encodeURIComponent(eventId)}/replay`);

  it('re-sends the same event id and body to the stored URL, newly signed, recorded as a replay attempt', async () => {
    const { url, reference, first, eventId } = await deliveredCharge();
    await sleep(1100); // a later second, so the fresh signature's timestamp differs
    const res = await replay(merchant.token, eventId).expect(202);
    expect(res.body).toEqual({ event_id: eventId, status: 'QUEUED', replay_requested_at: expect.any(String) });

    const [, again] = await waitFor('the replayed callback', () => (receiver.at(url).length === 2 ? receiver.at(url) : undefined));
    expect(again.headers['x-event-id']).toBe(eventId);
    expect(again.rawBody).toBe(first.rawBody);
    expect(again.headers.authorization).toBe(first.headers.authorization);
    expect(signedAt(again)).toBeGreaterThan(signedAt(first));
    expect(again.headers['x-signature']).not.toBe(first.headers['x-signature']);
    expect(verifySignature(merchant.signingSecret, again.rawBody, again.headers['x-signature'] as string)).toBe(true);

    const log = await waitFor('the replay attempt in the log', async () => {
      const [delivery] = (await callbackLog(app, merchant, reference)).deliveries;
      return delivery.attempt_log.length === 2 ? delivery : undefined;
    });
    expect(log).toMatchObject({ event_id: eventId, url, status: 'DELIVERED', attempts: 2 });
    expect(log.attempt_log.map((a: Record<string, unknown>) => [a.attempt, a.http_status, a.replay])).toEqual([
      [1, 200, false],
      [2, 200, true],
    ]);
  });

  it("another client's event, an unknown id and a malformed id are 404 in the gateway shape, and nothing is sent", async () => {
    const { url, eventId } = await deliveredCharge();
    for (const id of [eventId, randomUUID(), 'not-an-event', "1' OR '1'='1"]) {
      const res = await replay(other.token, id).expect(404);
      expect(res.body).toMatchObject({ status_code: 120, status_description: 'Event not found' });
    }
    expect((await replay(merchant.token, randomUUID()).expect(404)).body.status_code).toBe(120);
    await replay('not-a-token', eventId).expect(401);
    await sleep(800);
    expect(receiver.at(url)).toHaveLength(1);
  });

  it('requests made while a replay waits queue nothing more: five at once send one callback', async () => {
    const { url, eventId } = await deliveredCharge();
    // The five requests queue behind a lock on the delivery, so all of them arrive before the worker could send:
    // the first asks for the replay, the other four find it asked for.
    const blocker = dataSource(app).createQueryRunner();
    await blocker.startTransaction();
    await blocker.query(`SELECT 1 FROM callback_deliveries WHERE client_id = $1 AND id = $2 FOR UPDATE`, [merchant.clientId, eventId]);
    const pending = Promise.all(Array.from({ length: 5 }, () => replay(merchant.token, eventId)));
    await waitFor('the five requests to wait on the lock', async () => {
      const [{ n }] = await dataSource(app).query(
        `SELECT count(*)::int AS n FROM ${activityView()}
          WHERE wait_event_type = 'Lock' AND query ~ '^UPDATE [^ ]*callback_deliveries[^ ]*( callback_deliveries)? SET replay_requested_at'`,
      );
      return n === 5;
    });
    await blocker.commitTransaction();
    await blocker.release();
    const answers = await pending;
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.replay_requested_at)).size).toBe(1);
    await waitFor('the replayed callback', () => receiver.at(url).length === 2);
    await sleep(1000);
    expect(receiver.at(url)).toHaveLength(2);
    // Once sent, a new request replays again.
    await replay(merchant.token, eventId).expect(202);
    await waitFor('the second replay', () => receiver.at(url).length === 3);
  });

  it('a failed delivery replayed to a receiver that is back becomes DELIVERED; the schedule is not restarted', async () => {
    const url = receiver.url();
    receiver.failFor(url, Infinity);
    const body = chargeBody(merchant, { callback_url: url });
    await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const reference = body.external_reference as string;
    const failed = await waitFor('the delivery to fail', async () => {
      const [delivery] = (await callbackLog(app, merchant, reference)).deliveries;
      return delivery?.status === 'FAILED' ? delivery : undefined;
    });
    expect(failed.attempts).toBe(4);
    receiver.failFor(url, 0);
    await replay(merchant.token, failed.event_id).expect(202);
    const delivered = await waitFor('the replay to deliver', async () => {
      const [delivery] = (await callbackLog(app, merchant, reference)).deliveries;
      return delivery.status === 'DELIVERED' ? delivery : undefined;
    });
    expect(delivered.attempts).toBe(5);
    expect(delivered.attempt_log[4]).toMatchObject({ attempt: 5, http_status: 200, replay: true });
    await sleep(800);
    expect(receiver.at(url)).toHaveLength(5);
  });

  it('after a rotation with an overlap both signatures are sent (new first) and each secret verifies; after it, only the new one', async () => {
    const settings = app.get(CallbackSettingsService);
    const { url, eventId, first } = await deliveredCharge();
    expect((first.headers['x-signature'] as string).match(V1)).toHaveLength(1);
    const previous = merchant.signingSecret;
    const rotated = await settings.rotateSigningSecret(merchant.clientId, 60_000);

    await replay(merchant.token, eventId).expect(202);
    const [, dual] = await waitFor('the dual-signed replay', () => (receiver.at(url).length === 2 ? receiver.at(url) : undefined));
    const header = dual.headers['x-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(rotated, dual.rawBody, header)).toBe(true);
    expect(verifySignature(previous, dual.rawBody, header)).toBe(true);
    expect(verifySignature('whsec_neither', dual.rawBody, header)).toBe(false);
    // The new secret's signature comes first: a verifier checking only the first v1 moves on with the new secret.
    expect(verifySignature(rotated, dual.rawBody, header.split(',').slice(0, 2).join(','))).toBe(true);

    // A rotation whose overlap has ended (1 ms): one signature, by the newest secret only.
    const newest = await settings.rotateSigningSecret(merchant.clientId, 1);
    await sleep(20);
    await replay(merchant.token, eventId).expect(202);
    const [, , single] = await waitFor('the single-signed replay', () => (receiver.at(url).length === 3 ? receiver.at(url) : undefined));
    const singleHeader = single.headers['x-signature'] as string;
    expect(singleHeader.match(V1)).toHaveLength(1);
    expect(verifySignature(newest, single.rawBody, singleHeader)).toBe(true);
    expect(verifySignature(rotated, single.rawBody, singleHeader)).toBe(false);
    merchant.signingSecret = newest;
  });
});
