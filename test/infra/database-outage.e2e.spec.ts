import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createServer, Server, Socket } from 'node:net';
import request from 'supertest';
import { createHttpApp } from '../../src/http-app';
import { CREDENTIAL_STATUS_TTL_MS } from '../../src/auth/credential-status.service';
import { initiateCheckout } from '../support/collections-fixtures';
import { createPayoutMerchant, mobilePayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant, MerchantReceiver, sleep, waitFor, withEnv } from '../support/gateway-fixtures';
import { createTenant, TestTenant } from '../support/test-app';

/** A TCP proxy to Postgres that the test can cut (every connection dropped, new ones refused) and restore. */
class CuttableProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    if (this.server) return;
    this.server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * Issue 11 §7 and issue 22 item 3: while Postgres cannot be reached, every interface answers 503 with Retry-After in
 * its own shape (HTML for pages), never 500 and never a 401 that would make clients drop their tokens; the service
 * recovers by itself once Postgres is back.
 */
describe('database outage', () => {
  let proxy: CuttableProxy;
  let restoreEnv: () => void;
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let merchant: GatewayMerchant;
  let checkoutReference: string;
  let portalCookie: string;

  beforeAll(async () => {
    const target = new URL(process.env.DATABASE_URL!);
    proxy = new CuttableProxy(target.hostname, Number(target.port || 5432));
    await proxy.open();
    const proxied = new URL(target.toString());
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    restoreEnv = withEnv({
      DATABASE_URL: proxied.toString(),
      DB_POOL_SIZE: '4',
    });
    app = await createHttpApp('api');
    tenant = await createTenant(app);
    merchant = await createPayoutMerchant(app);
    checkoutReference = (
      await initiateCheckout(app, merchant, { url: (path = '/cb') => `https://merchant.example.com${path}` } as MerchantReceiver)
    ).reference;
    const login = await request(app.getHttpServer())
      .post('/portal/login')
      .type('form')
      .send({ username: tenant.username, password: tenant.password })
      .expect(303);
    portalCookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
  }, 60_000);

  afterAll(async () => {
    await proxy.open();
    await app?.close();
    restoreEnv?.();
    await proxy.cut();
  });

  const server = () => app.getHttpServer();
  const calls = {
    wallet: () => request(server()).get('/api/v1/account-types').set('authorization', tenant.auth),
    gateway: () => gateway(app, merchant.token).get('/v1/transaction/1/status'),
    payout: () =>
      gateway(app, merchant.token)
        .post(PAYOUT_PATHS.local)
        .send(mobilePayoutBody(merchant, 'ok', { payout_reference: 'po-outage' })),
    airtime: () =>
      gateway(app, merchant.token)
        .post('/v1/gw/airtime/send')
        .send({
          reference: 'air-outage',
          service_code: merchant.serviceCode,
          recipients: [{ phone_number: '254712345678', amount: '50' }],
        }),
    statement: () => gateway(app, merchant.token).post('/v1/statement').send({ start_date: '2026-01-01', end_date: '2026-01-02' }),
    checkoutPage: () => request(server()).get(`/checkout/${checkoutReference}`),
    checkoutState: () => request(server()).get(`/checkout/${checkoutReference}/state`),
    portal: () => request(server()).get('/portal/payments').set('cookie', portalCookie),
    portalSignIn: () => request(server()).post('/portal/login').type('form').send({ username: tenant.username, password: tenant.password }),
    walletLogin: () => request(server()).post('/api/v1/auth/login').send({ username: tenant.username, password: tenant.password }),
  };

  function expectUnavailable(res: request.Response): void {
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
  }

  it("answers 503 with Retry-After in each interface's shape while Postgres is away, then recovers", async () => {
    expect((await calls.wallet()).status).toBe(200);
    await proxy.cut();
    // Past the credential cache's lifetime: the token's own check now needs the database.
    await sleep(CREDENTIAL_STATUS_TTL_MS + 200);

    const wallet = await calls.wallet();
    expectUnavailable(wallet);
    expect(wallet.body).toEqual({ status: 503, message: expect.any(String), code: 'HttpException' });

    const gw = await calls.gateway();
    expectUnavailable(gw);
    expect(gw.body).toEqual({ status_code: 174, status_description: 'Service unavailable', message: expect.any(String) });

    // The payout family's own body: 721 with the document's generic outage code, naming the request's reference.
    const failed = { response_code: 721, response_description: 'Service unavailable', error_code: 'FAILED', message: expect.any(String) };
    const payout = await calls.payout();
    expectUnavailable(payout);
    expect(payout.body).toEqual({ payout_reference: 'po-outage', ...failed });
    const airtime = await calls.airtime();
    expectUnavailable(airtime);
    expect(airtime.body).toEqual({ reference: 'air-outage', ...failed });

    const statement = await calls.statement();
    expectUnavailable(statement);
    expect(statement.body).toEqual({ response_code: 503, response_description: expect.any(String), error_code: 'FAILED' });

    const page = await calls.checkoutPage();
    expectUnavailable(page);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Temporarily unavailable');

    const state = await calls.checkoutState();
    expectUnavailable(state);
    expect(state.body).toEqual({ statusCode: 503, message: expect.any(String), error: 'Service Unavailable' });

    for (const portal of [await calls.portal(), await calls.portalSignIn()]) {
      expectUnavailable(portal);
      expect(portal.headers['content-type']).toMatch(/^text\/html/);
      expect(portal.text).toContain('Temporarily unavailable');
      expect(portal.headers['set-cookie']).toBeUndefined();
    }

    const login = await calls.walletLogin();
    expectUnavailable(login);
    expect(login.body).toEqual({ status: 503, message: expect.any(String), code: 'HttpException' });

    await proxy.open();
    await waitFor('the wallet route to answer again', async () => (await calls.wallet()).status === 200, 20_000);
    expect((await calls.gateway()).status).toBe(404);
    expect((await calls.payout()).body).toMatchObject({ response_code: 720 });
    expect((await calls.airtime()).body).toMatchObject({ response_code: 720 });
    expect((await calls.statement()).status).toBe(200);
    expect((await calls.checkoutPage()).status).toBe(200);
    expect((await calls.checkoutState()).status).toBe(200);
    expect((await calls.portal()).status).toBe(200);
    expect((await calls.walletLogin()).status).toBe(200);
  }, 90_000);
});
