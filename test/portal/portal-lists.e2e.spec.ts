import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/** The portal's lists over HTTP: keyset pages that neither skip nor repeat, filters checked, exports of the whole list. */
describe('portal lists', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let cookie: string;
  const references: string[] = [];
  const prefix = `page-${Date.now()}`;

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createGatewayMerchant(app);
    for (let i = 0; i < 112; i++) {
      const body = chargeBody(merchant, { external_reference: `${prefix}-${String(i).padStart(3, '0')}` });
      await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
      references.push(body.external_reference as string);
    }
    // Several payments in one microsecond-exact instant: the id breaks the tie, so paging still neither skips nor repeats.
    await dataSource(app).query(
      `UPDATE payments SET created_at = '2026-01-01T00:00:00Z' WHERE client_id = $1 AND external_reference LIKE $2`,
      [merchant.clientId, `${prefix}-05%`],
    );
    const login = await request(app.getHttpServer())
      .post('/portal/login')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password })
      .expect(303)
      .expect('location', '/portal');
    cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
  });
  afterAll(async () => app?.close());

  const get = (path: string) => request(app.getHttpServer()).get(path).set('cookie', cookie);

  it('pages of 50 follow "Older" links through every payment once, newest first (ties broken by id)', async () => {
    const seen: string[] = [];
    let path: string | null = '/portal/payments';
    let pages = 0;
    while (path) {
      const res: request.Response = await get(path).expect(200);
      pages += 1;
      seen.push(...[...res.text.matchAll(new RegExp(`<code>(${prefix}-\\d{3})</code>`, 'g'))].map((m) => m[1]));
      path = /<a href="([^"]+)" rel="next">/.exec(res.text)?.[1].replace(/&amp;/g, '&') ?? null;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(112);
    expect(new Set(seen).size).toBe(112);
    const [{ order }] = await dataSource(app).query(
      `SELECT array_agg(external_reference ORDER BY created_at DESC, id DESC) AS order FROM payments WHERE client_id = $1`,
      [merchant.clientId],
    );
    expect(seen).toEqual(order);
  });

  it('the export holds the whole filtered list; bad filters and tampered cursors are a 400 page', async () => {
    const csv = await get(`/portal/payments.csv?reference=${prefix}-0`).expect(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(1 + 100);
    const old = await get(`/portal/payments.csv?to=2026-01-01&reference=${prefix}`).expect(200);
    expect(old.text.trim().split('\r\n')).toHaveLength(1 + 10);
    for (const query of [
      'status=999',
      'from=2026-13-01',
      'to=tomorrow',
      `reference=${'x'.repeat(65)}`,
      'after=bm9wZQ',
      'status=700&status=701',
    ]) {
      const res = await get(`/portal/payments?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.text).toContain('Check your input');
    }
    const forged = Buffer.from(JSON.stringify({ at: "2026-01-01'; DROP TABLE payments; --", id: '1' })).toString('base64url');
    expect((await get(`/portal/payments?after=${forged}`)).status).toBe(400);
  });

  it('without a session every page sends the browser to sign in, and posts change nothing', async () => {
    for (const path of ['/portal', '/portal/payments', '/portal/payments.csv', '/portal/api-keys']) {
      await request(app.getHttpServer()).get(path).expect(303).expect('location', '/portal/login');
    }
    await request(app.getHttpServer())
      .post('/portal/api-keys')
      .type('form')
      .send({ _csrf: 'x' })
      .expect(303)
      .expect('location', '/portal/login');
    await request(app.getHttpServer()).get('/portal').set('cookie', 'portal_session=forged-token').expect(303);
  });

  it('a sign-in form posted from another site (Origin) is refused', async () => {
    await request(app.getHttpServer())
      .post('/portal/login')
      .set('origin', 'https://attacker.example')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password })
      .expect(403);
    for (const origin of ['null', 'not a url']) {
      await request(app.getHttpServer())
        .post('/portal/login')
        .set('origin', origin)
        .type('form')
        .send({ username: merchant.tenant.username, password: merchant.tenant.password })
        .expect(403);
    }
    await request(app.getHttpServer())
      .post('/portal/login')
      .set('origin', 'http://127.0.0.1')
      .set('host', '127.0.0.1')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password })
      .expect(303);
  });
});
