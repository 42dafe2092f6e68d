import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { TestTenant, uniqueCode } from './test-app';

export function profileBody(tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  return {
    client_code: tenant.clientCode,
    profile_name: 'Jane Wanjiru',
    profile_type: 'INDIVIDUAL',
    client_profile_id: uniqueCode('P'),
    profile_email: 'jane@example.com',
    profile_msisdn: '+254712345678',
    contact_person_name: 'Jane Wanjiru',
    contact_person_email: 'jane@example.com',
    contact_person_msisdn: '254712345679',
    identification_number: '12345678',
    physical_address: 'Moi Avenue, Nairobi',
    country: 'Kenya',
    description: 'test profile',
    is_active: 1,
    ...overrides,
  };
}

/** Creates a profile, a wallet type and a wallet through the API; returns the wallet record. */
export async function createWallet(
  app: NestFastifyApplication,
  tenant: TestTenant,
  overrides: Record<string, unknown> = {},
): Promise<{ account_number: string; account_id: string; client_profile_id: string; account_type_code: string }> {
  const http = request(app.getHttpServer());
  const profile = await http.post('/api/v1/profiles').set('authorization', tenant.auth).send(profileBody(tenant)).expect(201);
  const type = await http
    .post('/api/v1/account-types')
    .set('authorization', tenant.auth)
    .send({ client_code: tenant.clientCode, account_type_name: 'Main' })
    .expect(201);
  const wallet = await http
    .post('/api/v1/accounts')
    .set('authorization', tenant.auth)
    .send({
      client_code: tenant.clientCode,
      client_profile_id: profile.body.client_profile_id,
      account_type_code: type.body.account_type_code,
      account_name: 'Main wallet',
      currency: 'KES',
      minimum_balance: 0,
      can_overdraw: false,
      status: 'ACTIVE',
      ...overrides,
    })
    .expect(201);
  return { ...wallet.body, client_profile_id: profile.body.client_profile_id, account_type_code: type.body.account_type_code };
}
