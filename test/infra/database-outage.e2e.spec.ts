import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createServer, Server, Socket } from 'node:net';
import request from 'supertest';
import { createHttpApp } from '../../src/http-app';
import { createGatewayMerchant, gateway, GatewayMerchant, withEnv } from '../support/gateway-fixtures';
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
 * Issue 11 §7: while Postgres cannot be reached, requests answer 503 with Retry-After in each interface's shape
 * (not 500), and the service recovers by itself once Postgres is back.
 */
describe('database outage', () => {
  let proxy: CuttableProxy;
  let restoreEnv: () => void;
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let merchant: GatewayMerchant;

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
    merchant = await createGatewayMerchant(app);
  }, 60_000);

  afterAll(async () => {
    await proxy.open();
    await app?.close();
    restoreEnv?.();
    await proxy.cut();
  });

  const walletCall = () => request(app.getHttpServer()).get('/api/v1/account-types').set('authorization', tenant.auth);
  const gatewayCall = () => gateway(app, merchant.token).get('/v1/transaction/1/status');

  it('answers 503 with Retry-After while Postgres is away, then recovers', async () => {
    expect((await walletCall()).status).toBe(200);
    await proxy.cut();

    const wallet = await walletCall();
    expect(wallet.status).toBe(503);
    expect(wallet.headers['retry-after']).toMatch(/^\d+$/);
    expect(wallet.body).toEqual({
      status: 503,
      message: expect.any(String),
      code: 'HttpException',
    });

    const gw = await gatewayCall();
    expect(gw.status).toBe(503);
    expect(gw.headers['retry-after']).toMatch(/^\d+$/);
    expect(gw.body).toEqual({
      status_code: 174,
      status_description: 'Service unavailable',
      message: expect.any(String),
    });

    const login = await request(app.getHttpServer())
      .post('/api/v1/auth/login')
      .send({ username: tenant.username, password: tenant.password });
    expect(login.status).toBe(503);

    await proxy.open();
    expect((await walletCall()).status).toBe(200);
    expect((await gatewayCall()).status).toBe(404);
  }, 60_000);
});
