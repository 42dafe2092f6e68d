import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { RailRequestKey, RailRequestsRepository } from '../../src/rails/rail-requests.repository';
import { createTestApp } from '../support/test-app';

/**
 * A batching operator's call (Africa's Talking) may be repeated under its Idempotency-Key when its answer was lost.
 * A slow answer of the same call that reads "busy" (not taken) must then no longer mark a request not taken: the
 * repeat may have been taken, and a request marked not taken is sent again under a key of its own, a second top-up.
 */
describe('rail requests: a repeated call is never sent again under another key', () => {
  let app: NestFastifyApplication;
  let requests: RailRequestsRepository;

  beforeAll(async () => {
    app = await createTestApp();
    requests = app.get(RailRequestsRepository);
  });
  afterAll(async () => app.close());

  /** Requests of one call (one client's), as the gateway leaves them before the call leaves. */
  async function sentTogether(count: number, idempotencyKey: string): Promise<RailRequestKey[]> {
    const clientId = randomUUID();
    const keys: RailRequestKey[] = [];
    for (let i = 0; i < count; i++) {
      const { request } = await requests.open(
        'africastalking',
        'airtime',
        { kind: 'AIRTIME', id: randomUUID(), clientId },
        '50.00',
        () => ({
          path: '/version1/airtime/send',
          body: { phoneNumber: `+2547${String(Date.now() % 1e8).padStart(8, '0')}${i}`, amount: 'KES 50.00' },
        }),
        new Date(Date.now() + 60_000),
      );
      keys.push(request);
    }
    const ids = keys.map((key) => key.id);
    await requests.noteCall(clientId, ids, {
      members: ids,
      idempotencyKey,
      sentAt: new Date().toISOString(),
      taken: false,
      repeatedAt: null,
    });
    return keys;
  }

  it('a "busy" answer that comes after the call was repeated leaves the request waiting on the repeat', async () => {
    const [a, b] = await sentTogether(2, 'key-repeated');
    expect(await requests.noteRepeat(a.client_id, [a.id, b.id], 'key-repeated')).toEqual([a.id, b.id]);
    await requests.recordSend(a, 'BUSY', { error: 'late 503 of the first call' }, true);
    expect((await requests.byId(a.id))!.state).toBe('SENDING');
  });

  it('a request found not taken before the repeat is left out of it, and one sent again under another key too', async () => {
    const [busy, waiting, movedOn] = await sentTogether(3, 'key-split');
    await requests.recordSend(busy, 'BUSY', { error: '503' }, true);
    expect((await requests.byId(busy.id))!.state).toBe('BUSY');
    await requests.noteCall(movedOn.client_id, [movedOn.id], {
      members: [movedOn.id],
      idempotencyKey: 'key-own',
      sentAt: new Date().toISOString(),
    });
    expect(await requests.noteRepeat(busy.client_id, [busy.id, waiting.id, movedOn.id], 'key-split')).toEqual([waiting.id]);
  });

  it('a call not repeated still marks its requests not taken on "busy", to be sent again', async () => {
    const [a] = await sentTogether(1, 'key-busy');
    await requests.recordSend(a, 'BUSY', { error: '503' }, true);
    expect((await requests.byId(a.id))!.state).toBe('BUSY');
    expect(await requests.resending(a)).toBe(true);
  });
});
