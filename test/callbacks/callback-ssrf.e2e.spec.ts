import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { CallbackResolver } from '../../src/common/url-safety/pinned-post';
import { checkoutBody } from '../support/collections-fixtures';
import {
  callbackLog,
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  paymentCount,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { createProductionApp } from '../support/production-app';

/**
 * Issue 11 §1: callback URLs may not reach our own network. Refused where they enter (charge, checkout, callback
 * settings used by `callback:set` and `seed`), and again at delivery on the addresses the host resolves to, with
 * the connection made to the address that was checked.
 */
const FORBIDDEN = [
  'https://[::ffff:127.0.0.1]:4779/',
  'https://[::ffff:7f00:1]:4779/',
  'https://169.254.169.254/',
  'https://10.0.0.8/cb',
  'https://192.168.0.10/cb',
  'https://172.20.1.1/cb',
  'https://100.100.1.1/cb',
  'https://[64:ff9b::a9fe:a9fe]/',
  'http://2130706433/',
  'http://0x7f.1/',
];

async function waitForDelivery(app: NestFastifyApplication, merchant: GatewayMerchant, reference: string) {
  return waitFor(`an attempt on ${reference}`, async () => {
    const log = await callbackLog(app, merchant, reference);
    return log.deliveries[0]?.attempts >= 1 ? log.deliveries[0] : undefined;
  });
}

describe('callback URLs in production', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let receiver: MerchantReceiver;
  const resolved = new Map<string, string[]>();

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '60000' }, 'sandbox', (role) =>
      createProductionApp({}, role),
    );
    ({ app, receiver } = sandbox);
    // Host names resolve where each test says; nothing here reaches beyond this machine.
    app.get(CallbackResolver).lookup = async (host) => {
      const answers = resolved.get(host) ?? [];
      const address = answers.length > 1 ? answers.shift()! : answers[0];
      return address ? [{ address, family: address.includes(':') ? 6 : 4 }] : [];
    };
    merchant = await createGatewayMerchant(app, {
      clientCallbackUrl: 'https://93.184.216.34/cb',
    });
  }, 60_000);
  afterAll(async () => sandbox?.close());

  it.each(FORBIDDEN)('a charge with callback_url %s is refused with a 400 and no payment', async (url) => {
    const before = await paymentCount(app, merchant.clientId);
    const res = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { callback_url: url }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      status_code: 172,
      message: expect.stringMatching(/^callback_url /),
    });
    expect(await paymentCount(app, merchant.clientId)).toBe(before);
  });

  it('checkout initiation refuses the metadata address and private ranges', async () => {
    for (const url of ['https://169.254.169.254/', 'https://10.1.1.1/x', 'https://[::ffff:127.0.0.1]/']) {
      const body = checkoutBody(merchant, receiver, {
        callback_url: url,
        redirect_url: 'https://shop.example.com/done',
      });
      const res = await gateway(app, merchant.token).post('/v2/checkout/initiate').send(body);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^callback_url /);
    }
  });

  it('callback settings (callback:set, seed --callback-url) refuse them too', async () => {
    const settings = app.get(CallbackSettingsService);
    for (const url of ['https://169.254.169.254/', 'https://192.168.1.1/', 'https://[::ffff:7f00:1]/', 'http://example.com/']) {
      await expect(
        settings.setEndpoint(merchant.clientId, 'collections', {
          url,
          username: 'u',
          password: 'p',
        }),
      ).rejects.toThrow(/callback URL must/);
    }
  });

  it('a host name resolving to a private address is refused when the charge or checkout comes in', async () => {
    resolved.set('intranet.test', ['10.0.0.7']);
    const res = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { callback_url: 'https://intranet.test/cb' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('10.0.0.7');
    const checkout = await gateway(app, merchant.token)
      .post('/v2/checkout/initiate')
      .send(
        checkoutBody(merchant, receiver, {
          callback_url: 'https://intranet.test/cb',
          redirect_url: 'https://shop.example.com/done',
        }),
      );
    expect(checkout.status).toBe(400);
    expect(checkout.body.message).toMatch(/^callback_url .*10\.0\.0\.7/);
  });

  it('DNS rebinding: public when the charge came in, loopback at delivery — refused at delivery, nothing sent', async () => {
    resolved.set('rebind.test', ['93.184.216.34', '127.0.0.1']);
    const body = chargeBody(merchant, {
      callback_url: 'https://rebind.test/cb',
    });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    const delivery = await waitForDelivery(app, merchant, body.external_reference as string);
    expect(delivery.attempt_log[0]).toMatchObject({
      http_status: null,
      error: expect.stringContaining('loopback'),
    });
    expect(receiver.received).toHaveLength(0);
  });
});

describe('callback delivery in sandbox', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let receiver: MerchantReceiver;
  const lookups: string[] = [];
  let answers: Record<string, string[]> = {};

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: '100',
      CALLBACK_RETRY_DELAYS_MS: '60000',
    });
    ({ app, receiver } = sandbox);
    app.get(CallbackResolver).lookup = async (host) => {
      lookups.push(host);
      const address = (answers[host] ?? []).shift();
      return address ? [{ address, family: 4 }] : [];
    };
    merchant = await createGatewayMerchant(app);
  }, 60_000);
  afterAll(async () => sandbox?.close());

  it('refuses the metadata address even in sandbox, where it enters and at delivery', async () => {
    const res = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(
        chargeBody(merchant, {
          callback_url: 'https://169.254.169.254/latest',
        }),
      );
    expect(res.status).toBe(400);

    answers = { 'metadata.test': ['169.254.169.254'] };
    const body = chargeBody(merchant, {
      callback_url: 'https://metadata.test/cb',
    });
    await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const delivery = await waitForDelivery(app, merchant, body.external_reference as string);
    expect(delivery.attempt_log[0]).toMatchObject({
      http_status: null,
      error: expect.stringContaining('link-local'),
    });
  });

  it('connects to the address that was checked: a second resolution to the metadata address is never made', async () => {
    const port = new URL(receiver.url()).port;
    answers = {
      'pinned.localhost': ['127.0.0.1', '169.254.169.254', '169.254.169.254'],
    };
    lookups.length = 0;
    const body = chargeBody(merchant, {
      callback_url: `http://pinned.localhost:${port}/pinned`,
    });
    await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const delivery = await waitForDelivery(app, merchant, body.external_reference as string);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect(lookups.filter((h) => h === 'pinned.localhost')).toHaveLength(1);
    const [call] = receiver.at(`http://x/pinned`);
    expect(call.headers.host).toBe(`pinned.localhost:${port}`);
  });
});
