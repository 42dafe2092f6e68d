import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { CallbackKind, CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { CallbacksService } from '../../src/callbacks/delivery/callbacks.service';
import { verifySignature } from '../support/callback-signature';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ReceivedCallback,
  signingSecretsOf,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * Callback settings per kind (provider contract §6, §8; issue 9 item 9, issue 11 items 1 and 8): each kind of
 * event has its own endpoint and Basic credentials, the client has one signing secret, credentials go only to the
 * registered endpoint's origin, and reading settings inside a transaction uses that transaction's connection.
 */
describe('callback settings per kind', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let settings: CallbackSettingsService;

  beforeAll(async () => {
    // One pooled connection: a settings read that took a second connection inside a transaction would hang.
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900', DB_POOL_SIZE: '1' });
    ({ app, receiver } = sandbox);
    settings = app.get(CallbackSettingsService);
  });
  afterAll(async () => sandbox?.close());

  async function received(url: string): Promise<ReceivedCallback> {
    const [callback] = await waitFor(`a callback at ${url}`, () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
    return callback;
  }

  /** A callback of the given kind scheduled as the payouts and airtime services schedule theirs. */
  async function schedule(merchant: GatewayMerchant, kind: CallbackKind, url: string): Promise<void> {
    await dataSource(app).transaction((manager) =>
      app.get(CallbacksService).schedule(manager, {
        clientId: merchant.clientId,
        kind,
        event: `${kind}_result`,
        reference: `ref-${randomUUID()}`,
        urls: [url],
        payload: { kind },
      }),
    );
  }

  it("each kind's deliveries carry that kind's credentials, all signed with the client's one secret", async () => {
    const merchant = await createGatewayMerchant(app);
    const endpoints = {
      collections: { url: receiver.url(`/collections/${randomUUID()}`), username: 'col-user', password: `col-${randomUUID()}` },
      payouts: { url: receiver.url(`/payouts/${randomUUID()}`), username: 'pay-user', password: `pay-${randomUUID()}` },
      airtime: { url: receiver.url(`/airtime/${randomUUID()}`), username: 'air-user', password: `air-${randomUUID()}` },
    };
    for (const [kind, endpoint] of Object.entries(endpoints)) await settings.setEndpoint(merchant.clientId, kind as CallbackKind, endpoint);
    for (const kind of ['payouts', 'airtime', 'collections'] as const) {
      expect(await settings.endpointFor(dataSource(app).manager, merchant.clientId, kind)).toEqual(endpoints[kind]);
    }

    for (const [kind, endpoint] of Object.entries(endpoints)) {
      await schedule(merchant, kind as CallbackKind, endpoint.url);
      const callback = await received(endpoint.url);
      expect(callback.body).toEqual({ kind });
      expect(callback.headers.authorization).toBe(basic(endpoint.username, endpoint.password));
      expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
    }
  });

  it('a kind without settings sends no credentials, even to the origin of another kind', async () => {
    const merchant = await createGatewayMerchant(app, { clientCallbackUrl: receiver.url(`/collections/${randomUUID()}`) });
    const url = receiver.url(`/payouts/${randomUUID()}`);
    await schedule(merchant, 'payouts', url);
    const callback = await received(url);
    expect(callback.headers.authorization).toBeUndefined();
    expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
  });

  it("a per-request callback_url on another origin never receives the registered endpoint's password", async () => {
    const other = await new MerchantReceiver().start();
    try {
      // Registered on this receiver; the charge's callback_url is on another port (another origin).
      const merchant = await createGatewayMerchant(app, { clientCallbackUrl: receiver.url(`/registered/${randomUUID()}`) });
      const foreign = other.url();
      const body = chargeBody(merchant, { callback_url: foreign, notify_client: true });
      await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
      const [atForeign] = await waitFor('the callback at the foreign URL', () =>
        other.at(foreign).length > 0 ? other.at(foreign) : undefined,
      );
      expect(atForeign.headers.authorization).toBeUndefined();
      expect(verifySignature(merchant.signingSecret, atForeign.rawBody, atForeign.headers['x-signature'] as string)).toBe(true);
      // The registered endpoint itself still gets the credentials.
      const atRegistered = await received(merchant.clientCallbackUrl!);
      expect(atRegistered.body.external_reference).toBe(body.external_reference);
      expect(atRegistered.headers.authorization).toBe(basic(merchant.callbackUsername, merchant.callbackPassword));

      // Same host and port as the registered URL, another path: same origin, credentials go.
      const samePlace = receiver.url(`/per-request/${randomUUID()}`);
      await gateway(app, merchant.token)
        .post('/v1/mobile-money/charge')
        .send(chargeBody(merchant, { callback_url: samePlace }))
        .expect(200);
      expect((await received(samePlace)).headers.authorization).toBe(basic(merchant.callbackUsername, merchant.callbackPassword));
    } finally {
      await other.close();
    }
  });

  it('setting endpoints does not change the signing secret; clients get theirs when they are created', async () => {
    const merchant = await createGatewayMerchant(app);
    const [before] = await dataSource(app).query(`SELECT secret_encrypted, rotated_at FROM client_signing_secrets WHERE client_id = $1`, [
      merchant.clientId,
    ]);
    for (const kind of ['collections', 'payouts', 'airtime'] as const) {
      await settings.setEndpoint(merchant.clientId, kind, { url: receiver.url(`/${kind}/${randomUUID()}`), username: 'u', password: 'p' });
    }
    const [after] = await dataSource(app).query(`SELECT secret_encrypted, rotated_at FROM client_signing_secrets WHERE client_id = $1`, [
      merchant.clientId,
    ]);
    expect(after).toEqual(before);
    expect(await signingSecretsOf(app, merchant.clientId)).toEqual([merchant.signingSecret]);

    const [{ missing }] = await dataSource(app).query(
      `SELECT count(*)::int AS missing FROM clients c WHERE c.id NOT IN (SELECT s.client_id FROM client_signing_secrets s)`,
    );
    expect(missing).toBe(0);
  });

  it('a client without a signing secret gets one at start-up; those with one keep theirs', async () => {
    const [kept, lacking] = [await createGatewayMerchant(app), await createGatewayMerchant(app)];
    await dataSource(app).query(`DELETE FROM client_signing_secrets WHERE client_id = $1`, [lacking.clientId]);
    await settings.onApplicationBootstrap();
    expect(await signingSecretsOf(app, kept.clientId)).toEqual([kept.signingSecret]);
    const [issued] = (await signingSecretsOf(app, lacking.clientId)) ?? [];
    expect(issued).toMatch(/\S{32,}/);
    expect(issued).not.toBe(lacking.signingSecret);
  });

  it('reads inside a transaction use its connection: with a pool of one, 10 concurrent notify_client charges all settle', async () => {
    const merchant = await createGatewayMerchant(app, { clientCallbackUrl: receiver.url(`/pool/${randomUUID()}`) });
    // Within one transaction, on the only pooled connection: a read through another connection would never finish.
    const read = dataSource(app).transaction((manager) => settings.endpointFor(manager, merchant.clientId, 'collections'));
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('settings read waited for a second connection')), 5000));
    expect(await Promise.race([read, timeout])).toEqual({
      url: merchant.clientCallbackUrl,
      username: merchant.callbackUsername,
      password: merchant.callbackPassword,
    });

    // The settlement announces each result inside its transaction, reading the collections endpoint there.
    const bodies = Array.from({ length: 10 }, () => chargeBody(merchant, { callback_url: receiver.url(), notify_client: true }));
    await Promise.all(bodies.map((body) => gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200)));
    await waitFor(
      'every result at the registered endpoint',
      () => receiver.at(merchant.clientCallbackUrl!).length === bodies.length,
      30_000,
    );
    const references = receiver.at(merchant.clientCallbackUrl!).map((c) => c.body.external_reference);
    expect(references.sort()).toEqual(bodies.map((b) => b.external_reference).sort());
  });
});
