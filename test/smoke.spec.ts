import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTenant, createTestApp } from './support/test-app';
import { createWallet } from './support/wallet-fixtures';

describe('smoke', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => (app = await createTestApp()));
  afterAll(async () => app.close());

  it('creates and fetches a wallet', async () => {
    const tenant = await createTenant(app);
    const wallet = await createWallet(app, tenant);
    const res = await request(app.getHttpServer())
      .get(`/api/v1/accounts/account-number/${wallet.account_number}`)
      .set('authorization', tenant.auth)
      .expect(200);
    expect(res.body.current_balance).toBe('0.0000');
  });
});
