import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * The portal's lists over HTTP: keyset pages that neither skip nor repeat, older and newer, with counts; filters
 * checked, exports of the whole list.
 */
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

  const referencesOn = (html: string) => [...html.matchAll(new RegExp(`<code>(${prefix}-\\d{3})</code>`, 'g'))].map((m) => m[1]);
  const link = (html: string, rel: 'next' | 'prev') =>
    new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(html)?.[1].replace(/&amp;/g, '&') ?? null;
  const shown = (html: string) => /<span>(\d+–\d+ of [\d,]+)<\/span>/.exec(html)?.[1];

  it('pages of 50 follow "Older" links through every payment once, newest first (ties broken by id), and "Newer" links back', async () => {
    const seen: string[] = [];
    const pages: Array<{ path: string; references: string[]; shown?: string; prev: string | null }> = [];
    let path: string | null = '/portal/payments';
    while (path) {
      const res: request.Response = await get(path).expect(200);
      pages.push({ path, references: referencesOn(res.text), shown: shown(res.text), prev: link(res.text, 'prev') });
      seen.push(...referencesOn(res.text));
      path = link(res.text, 'next');
    }
    expect(pages.map((p) => p.shown)).toEqual(['1–50 of 112', '51–100 of 112', '101–112 of 112']);
    expect(pages[0].prev).toBeNull();
    expect(seen).toHaveLength(112);
    expect(new Set(seen).size).toBe(112);
    // Back from the last page: "Newer" shows the page before it again, with the same rows and counts.
    const back = await get(pages[2].prev!).expect(200);
    expect(referencesOn(back.text)).toEqual(pages[1].references);
    expect(shown(back.text)).toBe('51–100 of 112');
    const first = await get(link(back.text, 'prev')!).expect(200);
    expect(referencesOn(first.text)).toEqual(pages[0].references);
    expect(link(first.text, 'prev')).toBeNull();
    const [{ order }] = await dataSource(app).query(
      `SELECT array_agg(external_reference ORDER BY created_at DESC, id DESC) AS order FROM payments WHERE client_id = $1`,
      [merchant.clientId],
    );
    expect(seen).toEqual(order);
  });

  it('the export holds the whole filtered list; bad filters and tampered cursors are a 400 page', async () => {
    const csv = await get(`/portal/payments.csv?q=${prefix}-0`).expect(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines).toHaveLength(1 + 100);
    const old = await get(`/portal/payments.csv?to=2026-01-01&q=${prefix}`).expect(200);
    expect(old.text.trim().split('\r\n')).toHaveLength(1 + 10);
    for (const query of [
      'status=999',
      'from=2026-13-01',
      'to=tomorrow',
      `q=${'x'.repeat(65)}`,
      'after=bm9wZQ',
      'before=bm9wZQ',
      'status=700&status=701',
    ]) {
      const res = await get(`/portal/payments?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.text).toContain('Check your input');
    }
    const forged = Buffer.from(JSON.stringify({ at: "2026-01-01'; DROP TABLE payments; --", id: '1' })).toString('base64url');
    expect((await get(`/portal/payments?after=${forged}`)).status).toBe(400);
    const both = Buffer.from(JSON.stringify({ at: '2026-01-01 00:00:00+00', id: '1' })).toString('base64url');
    expect((await get(`/portal/payments?after=${both}&before=${both}`)).status).toBe(400);
    expect((await get('/portal?days=9')).status).toBe(400);
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
