import { getQueueToken } from '@nestjs/bullmq';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queue } from 'bullmq';
import { DeliveryGroup, DELIVERY_GROUP } from '../../src/callbacks/delivery/callback-relay.service';
import { CallbacksService } from '../../src/callbacks/delivery/callbacks.service';
import { CALLBACKS_QUEUE } from '../../src/infra/queue/queues';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  sleep,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/** Long enough that a replay is asked for, and sent, while the first retry waits. */
const FIRST_RETRY_MS = 2500;

/**
 * Callback deliveries go to BullMQ in groups: a merchant's deliveries scheduled together are a few jobs, each
 * delivery sent once; and a job acts only on the deliveries still handed over to it, so a delivery handed over again
 * while its first job waits for a retry (a replay was asked for) has that retry sent once, not by both jobs.
 */
describe('callback deliveries in groups', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let queue: Queue<DeliveryGroup>;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: `${FIRST_RETRY_MS},5000` });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
    queue = app.get<Queue<DeliveryGroup>>(getQueueToken(CALLBACKS_QUEUE), { strict: false });
  });
  afterAll(async () => sandbox?.close());

  it(`120 callbacks a merchant's transaction scheduled go to BullMQ as ${Math.ceil(120 / DELIVERY_GROUP)} jobs, and each is sent once`, async () => {
    const url = receiver.url();
    const added = jest.spyOn(queue, 'addBulk');
    try {
      const references = Array.from({ length: 120 }, (_, i) => `group-${i}`);
      await dataSource(app).transaction((manager) =>
        app.get(CallbacksService).schedule(
          manager,
          ...references.map((reference) => ({
            clientId: merchant.clientId,
            kind: 'collections' as const,
            event: 'successful_payment',
            reference,
            urls: [url],
            payload: { external_reference: reference },
          })),
        ),
      );
      await waitFor('every callback', () => receiver.at(url).length >= 120);
      await sleep(1000);
      const received = receiver.at(url);
      expect(received).toHaveLength(120);
      expect(new Set(received.map((r) => r.headers['x-event-id'])).size).toBe(120);
      expect(new Set(received.map((r) => r.body.external_reference)).size).toBe(120);

      const jobs = added.mock.calls.flatMap(([bulk]) => bulk).filter((job) => job.data.clientId === merchant.clientId);
      expect(jobs).toHaveLength(Math.ceil(120 / DELIVERY_GROUP));
      expect(jobs.map((job) => job.data.items.length).sort((a, b) => a - b)).toEqual([20, 50, 50]);
    } finally {
      added.mockRestore();
    }
  });

  it('a replay asked for while the first retry waits: the replay and the retry are each sent once', async () => {
    const url = receiver.url();
    receiver.failFor(url, 2); // the first attempt and the replay are refused; the retry is acknowledged
    const body = chargeBody(merchant, { callback_url: url });
    await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const reference = body.external_reference as string;
    const [first] = await waitFor('the first attempt to be recorded', async () => {
      const [delivery] = (await callbackLog(app, merchant, reference)).deliveries;
      return delivery?.attempts === 1 ? [delivery] : undefined;
    });
    expect(first.status).toBe('PENDING');

    // The scheduled job now waits for the retry; the replay hands the delivery over again, to a new job.
    await gateway(app, merchant.token).post(`/v1/callbacks/${first.event_id}/replay`).expect(202);
    await waitFor('the replay', () => receiver.at(url).length === 2);
    const delivered = await waitFor('the retry to deliver', async () => {
      const [delivery] = (await callbackLog(app, merchant, reference)).deliveries;
      return delivery.status === 'DELIVERED' ? delivery : undefined;
    });
    await sleep(1500);
    expect(receiver.at(url)).toHaveLength(3);
    expect(delivered.attempt_log.map((a: Record<string, unknown>) => [a.http_status, a.replay])).toEqual([
      [500, false],
      [500, true],
      [200, false],
    ]);
  });
});
