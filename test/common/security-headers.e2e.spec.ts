import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTenant, createTestApp } from '../support/test-app';
import { createProductionApp } from '../support/production-app';

/** Issue 11 §9: security headers, and what production exposes. */
describe('security headers and exposure', () => {
  describe('sandbox', () => {
    let app: NestFastifyApplication;
    beforeAll(async () => {
      app = await createTestApp();
    });
    afterAll(async () => app?.close());

    it('nosniff everywhere; no-store on token and money answers; no HSTS in sandbox', async () => {
      const tenant = await createTenant(app);
      const http = request(app.getHttpServer());
      const health = await http.get('/health/live');
      expect(health.headers['x-content-type-options']).toBe('nosniff');
      expect(health.headers['strict-transport-security']).toBeUndefined();

      const login = await http.post('/api/v1/auth/login').send({ username: tenant.username, password: tenant.password }).expect(200);
      expect(login.headers['cache-control']).toBe('no-store');
      expect(login.headers['x-content-type-options']).toBe('nosniff');
      const wallets = await http.get('/api/v1/wallets').set('authorization', tenant.auth);
      expect(wallets.headers['cache-control']).toBe('no-store');
      const gatewayAuth = await http.post('/v1/auth').send({ consumer_key: 'nope', consumer_secret: 'nope' });
      expect(gatewayAuth.status).toBe(401);
      expect(gatewayAuth.headers['cache-control']).toBe('no-store');
    });

    it('docs and metrics are served in sandbox by default', async () => {
      expect((await request(app.getHttpServer()).get('/docs-json')).status).toBe(200);
      expect((await request(app.getHttpServer()).get('/metrics')).status).toBe(200);
    });
  });

  describe('production', () => {
    it('HSTS on; /docs and /metrics off without configuration', async () => {
      const app = await createProductionApp();
      try {
        const health = await request(app.getHttpServer()).get('/health/live');
        expect(health.headers['strict-transport-security']).toMatch(/max-age=31536000/);
        expect(health.headers['x-content-type-options']).toBe('nosniff');
        expect((await request(app.getHttpServer()).get('/docs-json')).status).toBe(404);
        expect((await request(app.getHttpServer()).get('/docs')).status).toBe(404);
        expect((await request(app.getHttpServer()).get('/metrics')).status).toBe(404);
      } finally {
        await app.close();
      }
    });

    it('METRICS_TOKEN puts /metrics behind a bearer token', async () => {
      const token = 'metrics-token-0123456789';
      const app = await createProductionApp({ METRICS_TOKEN: token });
      try {
        expect((await request(app.getHttpServer()).get('/metrics')).status).toBe(401);
        expect((await request(app.getHttpServer()).get('/metrics').set('authorization', 'Bearer wrong-token-0123456789')).status).toBe(401);
        const ok = await request(app.getHttpServer()).get('/metrics').set('authorization', `Bearer ${token}`);
        expect(ok.status).toBe(200);
        expect(ok.text).toContain('# HELP');
      } finally {
        await app.close();
      }
    });
  });
});
