import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import Stripe from 'stripe';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { SecretBox } from '../../src/common/crypto/secret-box';
import { APP_CONFIG, type AppConfig } from '../../src/infra/config/app-config';
import {
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

const stripe = new Stripe('sk_test_not_used_offline');

/** What a merchant's Standard Webhooks library does with a callback: the parsed payload, or it throws. */
function standardVerify(secret: string, callback: ReceivedCallback, rawBody = callback.rawBody): unknown {
  return new Webhook(secret).verify(rawBody, callback.headers as Record<string, string>);
}

/** What a merchant's Stripe library does with a callback's X-Signature: the parsed payload, or it throws. */
function stripeVerify(secret: string, callback: ReceivedCallback, rawBody = callback.rawBody): unknown {
  return stripe.webhooks.constructEvent(rawBody, callback.headers['x-signature'] as string, secret);
}

/** A body one character off the one signed: what an attacker in the middle would send. */
const tampered = (callback: ReceivedCallback) => callback.rawBody.replace(/}$/, ',"amount":"1.0000"}');

const SIGNATURE_ENTRY = 'v1,[A-Za-z0-9+/]{43}=';

/**
 * Every callback carries Standard Webhooks' headers (webhook-id, webhook-timestamp, webhook-signature) beside the
 * contract's X-Signature (§6, unchanged): real deliveries verify with the `standardwebhooks` package and with Stripe's
 * `constructEvent`, keyed with the one secret the merchant was shown; both secrets sign during a rotation's overlap;
 * a tampered body fails both.
 */
describe('callbacks signed for Standard Webhooks and Stripe verifiers', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let settings: CallbackSettingsService;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    settings = app.get(CallbackSettingsService);
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  /** A charge whose callback goes to a fresh receiver URL, answered 500 `failures` times first. */
  async function charge(failures = 0): Promise<{ url: string; callbacks: ReceivedCallback[] }> {
    const url = receiver.url();
    receiver.failFor(url, failures);
    await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { callback_url: url }))
      .expect(200);
    const callbacks = await waitFor('the callbacks', () => (receiver.at(url).length === failures + 1 ? receiver.at(url) : undefined));
    return { url, callbacks };
  }

  async function replay(url: string): Promise<ReceivedCallback> {
    const before = receiver.at(url).length;
    await gateway(app, merchant.token)
      .post(`/v1/callbacks/${receiver.at(url)[0].headers['x-event-id']}/replay`)
      .expect(202);
    const all = await waitFor('the replayed callback', () => (receiver.at(url).length > before ? receiver.at(url) : undefined));
    return all[before];
  }

  it('every secret issued is a Standard Webhooks secret as it is: whsec_ and 24 bytes of standard base64', async () => {
    // Twenty rotations: a url-safe alphabet would put - or _ in nearly every run of twenty secrets.
    for (let i = 0; i < 20; i++) {
      const secret = await settings.rotateSigningSecret(merchant.clientId);
      expect(() => new Webhook(secret)).not.toThrow();
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(24);
      merchant.signingSecret = secret;
    }
  });

  it('each attempt carries webhook-id (the event id, the same on a retry), the X-Signature instant and a v1 signature both libraries accept', async () => {
    const { callbacks } = await charge(1);
    expect(callbacks).toHaveLength(2);
    const [first, retry] = callbacks;
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    for (const callback of callbacks) {
      expect(callback.headers['webhook-id']).toBe(callback.headers['x-event-id']);
      expect(callback.headers['x-signature']).toMatch(new RegExp(`^t=${callback.headers['webhook-timestamp']},v1=[0-9a-f]{64}$`));
      expect(callback.headers['webhook-signature']).toMatch(new RegExp(`^${SIGNATURE_ENTRY}$`));
      expect(standardVerify(merchant.signingSecret, callback)).toEqual(callback.body);
      expect(stripeVerify(merchant.signingSecret, callback)).toEqual(callback.body);
    }
  });

  it('a tampered body, or another secret, fails both verifiers', async () => {
    const {
      callbacks: [callback],
    } = await charge();
    expect(() => standardVerify(merchant.signingSecret, callback, tampered(callback))).toThrow(WebhookVerificationError);
    expect(() => stripeVerify(merchant.signingSecret, callback, tampered(callback))).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const other = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    expect(() => standardVerify(other, callback)).toThrow(WebhookVerificationError);
    expect(() => stripeVerify(other, callback)).toThrow(Stripe.errors.StripeSignatureVerificationError);
  });

  it('during a rotation both secrets sign (newest first) and each verifies with both libraries; after the overlap only the new one', async () => {
    const { url } = await charge();
    const previous = merchant.signingSecret;
    const rotated = await settings.rotateSigningSecret(merchant.clientId, 60_000);

    const dual = await replay(url);
    expect(dual.headers['webhook-signature']).toMatch(new RegExp(`^${SIGNATURE_ENTRY} ${SIGNATURE_ENTRY}$`));
    expect((dual.headers['webhook-signature'] as string).split(' ')[0]).toBe(
      new Webhook(rotated).sign(
        dual.headers['webhook-id'] as string,
        new Date(Number(dual.headers['webhook-timestamp']) * 1000),
        dual.rawBody,
      ),
    );
    for (const secret of [rotated, previous]) {
      expect(standardVerify(secret, dual)).toEqual(dual.body);
      expect(stripeVerify(secret, dual)).toEqual(dual.body);
      expect(() => standardVerify(secret, dual, tampered(dual))).toThrow(WebhookVerificationError);
      expect(() => stripeVerify(secret, dual, tampered(dual))).toThrow(Stripe.errors.StripeSignatureVerificationError);
    }

    const newest = await settings.rotateSigningSecret(merchant.clientId, 1);
    await sleep(20);
    const single = await replay(url);
    expect(single.headers['webhook-signature']).toMatch(new RegExp(`^${SIGNATURE_ENTRY}$`));
    expect(standardVerify(newest, single)).toEqual(single.body);
    expect(stripeVerify(newest, single)).toEqual(single.body);
    expect(() => standardVerify(rotated, single)).toThrow(WebhookVerificationError);
    expect(() => stripeVerify(rotated, single)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    merchant.signingSecret = newest;
  });

  it('a secret issued in the url-safe alphabet keeps verifying X-Signature as it is, and Standard Webhooks with - as + and _ as /', async () => {
    const { url } = await charge();
    // 0xfb bytes are "-_v7" in base64url and "+/v7" in base64: a secret of the alphabet issued before this change.
    const legacy = `whsec_${Buffer.alloc(24, 0xfb).toString('base64url')}`;
    const box = new SecretBox(app.get<AppConfig>(APP_CONFIG).jwtSecret, 'paygate/callback-settings/v1');
    await dataSource(app).query(
      `UPDATE client_signing_secrets SET secret_encrypted = $2, previous_secret_encrypted = NULL WHERE client_id = $1`,
      [merchant.clientId, box.seal(legacy)],
    );
    const callback = await replay(url);
    expect(stripeVerify(legacy, callback)).toEqual(callback.body);
    expect(() => new Webhook(legacy)).toThrow(); // the library reads the standard alphabet only
    const standardForm = `whsec_${legacy.slice('whsec_'.length).replaceAll('-', '+').replaceAll('_', '/')}`;
    expect(standardVerify(standardForm, callback)).toEqual(callback.body);
  });
});
