import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { verifySignature } from '../support/callback-signature';
import { airtimeBody } from '../support/airtime-fixtures';
import { b2bBody, cliJson, localPayoutBody, PAYOUT_PATHS, runCli } from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant, IsolatedSandbox, ReceivedCallback, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { uniqueCode } from '../support/test-app';

/**
 * Issue 22 item 5 (provider contract §10): the seed's callback flags register the endpoint for every kind, so the
 * seeded merchant's payout, B2B and airtime callbacks arrive there with its Basic credentials.
 */
describe('seeded callback settings', () => {
  let sandbox: IsolatedSandbox;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '50' });
  });
  afterAll(async () => sandbox?.close());

  it('payout, B2B and airtime callbacks of the seeded merchant carry the seeded Basic auth', async () => {
    const { app, receiver } = sandbox;
    const hook = receiver.url(`/seeded/${randomUUID()}`);
    const seeded = cliJson(
      await runCli(
        sandbox.db.url,
        'seed',
        '--client-code',
        uniqueCode('SEED'),
        '--callback-url',
        hook,
        '--callback-username',
        'seed-user',
        '--callback-password',
        'seed-password',
        '--json',
      ),
    );
    const auth = await request(app.getHttpServer())
      .post('/v1/auth')
      .send({ consumer_key: seeded.consumer_key, consumer_secret: seeded.consumer_secret })
      .expect(200);
    const merchant = { clientCode: seeded.client_code, serviceCode: seeded.service_code } as GatewayMerchant;
    const call = gateway(app, auth.body.access_token as string);

    // Per-request callback URLs on the registered endpoint's origin (payouts, B2B); airtime goes to the endpoint.
    const payoutUrl = receiver.url(`/seeded-payout/${randomUUID()}`);
    const b2bUrl = receiver.url(`/seeded-b2b/${randomUUID()}`);
    expect((await call.post(PAYOUT_PATHS.local).send(localPayoutBody(merchant, { callback_url: payoutUrl }))).body.response_code).toBe(720);
    expect((await call.post(PAYOUT_PATHS.b2b).send(b2bBody(merchant, { callback_url: b2bUrl }))).body.response_code).toBe(720);
    const airtime = airtimeBody([{ phone_number: '254712345678', amount: '50' }]);
    expect((await call.post('/v1/gw/airtime/send').send(airtime)).body.response_code).toBe(720);

    const arrived = (url: string, what: string, match: (c: ReceivedCallback) => boolean = () => true) =>
      waitFor(`the seeded merchant's ${what} callback`, () => receiver.at(url).find(match), 20_000);
    const callbacks = [
      await arrived(payoutUrl, 'payout'),
      await arrived(b2bUrl, 'B2B'),
      await arrived(hook, 'airtime', (c) => c.body.external_reference === airtime.reference),
    ];
    for (const callback of callbacks) {
      expect(callback.headers.authorization).toBe(`Basic ${Buffer.from('seed-user:seed-password').toString('base64')}`);
      expect(verifySignature(seeded.signing_secret as string, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
      expect(new Webhook(seeded.signing_secret as string).verify(callback.rawBody, callback.headers as Record<string, string>)).toEqual(
        callback.body,
      );
    }
  }, 60_000);

  it("without callback flags, the portal's Callbacks page shows a URL for every kind, and a re-seed keeps the merchant's own", async () => {
    const { app } = sandbox;
    const code = uniqueCode('SEED');
    const callbackUrls = async (seeded: Record<string, unknown>) => {
      const login = await request(app.getHttpServer())
        .post('/portal/login')
        .type('form')
        .send({ username: seeded.username, password: seeded.password })
        .expect(303);
      const cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
      const page = await request(app.getHttpServer()).get('/portal/callbacks').set('cookie', cookie).expect(200);
      return [...page.text.matchAll(/<form method="post" action="\/portal\/callbacks\/(\w+)">[\s\S]*?name="url"[^>]*value="([^"]*)"/g)].map(
        (m) => [m[1], m[2]],
      );
    };

    const first = cliJson(await runCli(sandbox.db.url, 'seed', '--client-code', code, '--json'));
    expect(await callbackUrls(first)).toEqual([
      ['collections', 'http://127.0.0.1:4000/callbacks'],
      ['payouts', 'http://127.0.0.1:4000/payouts'],
      ['airtime', 'http://127.0.0.1:4000/airtime'],
    ]);

    const own = sandbox.receiver.url(`/own/${randomUUID()}`);
    cliJson(
      await runCli(
        sandbox.db.url,
        'callback:set',
        '--client',
        code,
        '--kind',
        'payouts',
        '--url',
        own,
        '--username',
        'u',
        '--password',
        'p',
        '--json',
      ),
    );
    const second = cliJson(await runCli(sandbox.db.url, 'seed', '--client-code', code, '--json'));
    expect((await callbackUrls(second)).find(([kind]) => kind === 'payouts')).toEqual(['payouts', own]);
  }, 60_000);
});
