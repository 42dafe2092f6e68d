import { createHttpApp } from '../../src/http-app';
import { withEnv } from '../support/gateway-fixtures';
import { createProductionApp, PRODUCTION_ENV } from '../support/production-app';

/** Issue 11 §3: production never takes charges through the sandbox simulator. */
describe('rails in production', () => {
  it('APP_ENV=production refuses to start while a rail has only its sandbox simulator, naming the rail', async () => {
    const restore = withEnv(PRODUCTION_ENV);
    try {
      await expect(createHttpApp('api')).rejects.toThrow(/no production adapter for the mobile-money rail/);
    } finally {
      restore();
    }
  });

  it('starts when an operator adapter is bound (here a test adapter, through a provider override)', async () => {
    const app = await createProductionApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/health/live' });
      expect(res.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
