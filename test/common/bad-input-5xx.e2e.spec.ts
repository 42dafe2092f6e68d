import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createService, fund, moneyBody, post, reverse, walletSet } from '../support/money-fixtures';
import { createTenant, createTestApp, TestTenant } from '../support/test-app';
import { profileBody } from '../support/wallet-fixtures';

/** A raw HTTP/1.1 request (supertest would re-encode the path or refuse the headers). */
function raw(app: NestFastifyApplication, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const { port } = app.getHttpServer().address() as AddressInfo;
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers,
        insecureHTTPParser: true,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown>;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = { text };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const WALLET_SHAPE = {
  status: 400,
  message: expect.anything(),
  code: 'HttpException',
};
const GATEWAY_SHAPE = {
  status_code: expect.anything(),
  status_description: expect.any(String),
  message: expect.any(String),
};

/** Issue 11 §6: inputs that used to answer 5xx, and framework errors outside the contract's error shapes. */
describe('bad input never answers 5xx', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let merchant: GatewayMerchant;
  let account: string;
  let service: string;

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen({ port: 0, host: '127.0.0.1' });
    tenant = await createTenant(app);
    const set = await walletSet(app, tenant);
    account = await set.create();
    service = await createService(app, tenant);
    await fund(app, tenant, account, 1000);
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => app?.close());

  it.each(['2009-W01-1', '2009-123'])('transaction_date %s is a 400 in the wallet shape', async (date) => {
    const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service, 10, { transaction_date: date }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject(WALLET_SHAPE);
  });

  it('a transaction id of 36 dashes is a 400 (or not found) on GET and REVERSE, never a 5xx', async () => {
    const id = '-'.repeat(36);
    const one = await request(app.getHttpServer()).get(`/api/v1/transactions/${id}`).set('authorization', tenant.auth);
    expect([400, 404]).toContain(one.status);
    expect(one.body).toMatchObject({
      status: one.status,
      code: 'HttpException',
    });
    const rev = await reverse(app, tenant, id, {});
    expect([400, 404]).toContain(rev.status);
    expect(rev.body).toMatchObject({
      status: rev.status,
      code: 'HttpException',
    });
  });

  it('a lone surrogate in an email field is a 400 on the wallet and the gateway', async () => {
    const profile = await request(app.getHttpServer())
      .post('/api/v1/profiles')
      .set('authorization', tenant.auth)
      .set('content-type', 'application/json')
      .send(JSON.stringify(profileBody(tenant, { profile_email: 'a\ud800@example.com' })));
    expect(profile.status).toBe(400);
    expect(profile.body).toMatchObject(WALLET_SHAPE);
    const charge = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .set('content-type', 'application/json')
      .send(JSON.stringify(chargeBody(merchant, { payer_email: '\ud800@example.com' })));
    expect(charge.status).toBe(400);
    expect(charge.body).toMatchObject(GATEWAY_SHAPE);
  });

  it('GET /checkout/authorize/%00 answers without an internal message', async () => {
    const res = await raw(app, 'GET', '/checkout/authorize/%00');
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(res.body)).not.toMatch(/invalid|null byte|Internal|Error:/i);
  });

  it("bad %-encoding is a 400 in each interface's shape", async () => {
    const wallet = await raw(app, 'GET', '/api/v1/transactions/%E0%A4%A', {
      authorization: tenant.auth,
    });
    expect(wallet.status).toBe(400);
    expect(wallet.body).toMatchObject(WALLET_SHAPE);
    const gw = await raw(app, 'GET', '/v1/transaction/%E0%A4%A/status', {
      'x-access-token': merchant.token,
    });
    expect(gw.status).toBe(400);
    expect(gw.body).toMatchObject(GATEWAY_SHAPE);
  });

  it("a body that is not JSON is a 400 in each interface's shape", async () => {
    const wallet = await raw(
      app,
      'POST',
      '/api/v1/transactions?command=CREDIT',
      { authorization: tenant.auth, 'content-type': 'application/json' },
      '{"a":',
    );
    expect(wallet.status).toBe(400);
    expect(wallet.body).toMatchObject(WALLET_SHAPE);
    const gw = await raw(
      app,
      'POST',
      '/v1/mobile-money/charge',
      { 'x-access-token': merchant.token, 'content-type': 'application/json' },
      '{"a":',
    );
    expect(gw.status).toBe(400);
    expect(gw.body).toMatchObject(GATEWAY_SHAPE);
  });

  it("a URI too long is a 414 and headers too large a 431, in the interface's shape", async () => {
    const long = await raw(app, 'GET', `/v1/transaction/${'9'.repeat(10_000)}/status`, { 'x-access-token': merchant.token });
    expect(long.status).toBe(414);
    expect(long.body).toMatchObject({
      status_code: expect.anything(),
      message: expect.any(String),
    });
    const big = await raw(app, 'GET', '/api/v1/wallets', {
      authorization: tenant.auth,
      'x-filler': 'x'.repeat(20_000),
    });
    expect(big.status).toBe(431);
    expect(big.body).toMatchObject({ status: 431, code: 'HttpException' });
  });
});
