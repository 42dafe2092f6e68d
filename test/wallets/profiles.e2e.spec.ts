import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { appWithTenants, dataSource, TestTenant, uniqueCode } from '../support/test-app';
import { profileBody } from '../support/wallet-fixtures';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('profiles (wallet document §2 Profile, §3, §4)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    ({ app, tenant, other } = await appWithTenants());
  });
  afterAll(async () => app.close());

  const create = (t: TestTenant, body: Record<string, unknown>) => http().post('/api/v1/profiles').set('authorization', t.auth).send(body);
  const fetch = (t: TestTenant, id: string) =>
    http()
      .get(`/api/v1/client-profiles/client-profile-id/${encodeURIComponent(id)}`)
      .set('authorization', t.auth);
  const command = (t: TestTenant, id: string, cmd?: string) =>
    http()
      .post(`/api/v1/profiles/client-profile-id/${encodeURIComponent(id)}${cmd === undefined ? '' : `?command=${cmd}`}`)
      .set('authorization', t.auth);

  describe('create', () => {
    it('answers 201 with profile_id and the fields as sent, msisdns as numbers', async () => {
      const body = profileBody(tenant, {
        profile_type: 'BUSINESS',
        profile_msisdn: '+254712345678',
        contact_person_msisdn: '254798765432',
      });
      const res = await create(tenant, body).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          profile_id: expect.stringMatching(UUID),
          client_code: tenant.clientCode,
          profile_name: body.profile_name,
          profile_type: 'BUSINESS',
          client_profile_id: body.client_profile_id,
          profile_email: body.profile_email,
          profile_msisdn: 254712345678,
          contact_person_name: body.contact_person_name,
          contact_person_email: body.contact_person_email,
          contact_person_msisdn: 254798765432,
          identification_number: body.identification_number,
          physical_address: body.physical_address,
          country: body.country,
          description: body.description,
          is_active: 1,
        }),
      );
      expect(typeof res.body.profile_msisdn).toBe('number');
      expect(typeof res.body.contact_person_msisdn).toBe('number');
    });

    it('accepts a profile without the optional description and created inactive', async () => {
      const { description: _omit, ...body } = profileBody(tenant, { is_active: 0 });
      const res = await create(tenant, body).expect(201);
      expect(res.body.description).toBeNull();
      expect(res.body.is_active).toBe(0);
      const fetched = await fetch(tenant, body.client_profile_id as string).expect(200);
      expect(fetched.body.is_active).toBe(0);
      expect(fetched.body.status).toBe('INACTIVE');
    });

    it('refuses a duplicate client_profile_id with 409 and keeps the first profile', async () => {
      const first = profileBody(tenant);
      await create(tenant, first).expect(201);
      const res = await create(tenant, { ...first, profile_name: 'Someone Else' }).expect(409);
      expect(res.body).toEqual({ status: 409, message: expect.any(String), code: 'HttpException' });
      const fetched = await fetch(tenant, first.client_profile_id as string).expect(200);
      expect(fetched.body.profile_name).toBe(first.profile_name);
      const [{ n }] = await dataSource(app).query(
        'SELECT count(*)::int AS n FROM profiles WHERE client_id = $1 AND client_profile_id = $2',
        [tenant.clientId, first.client_profile_id],
      );
      expect(n).toBe(1);
    });

    it('lets another client use the same client_profile_id (uniqueness is per client, and nothing leaks)', async () => {
      const body = profileBody(tenant);
      await create(tenant, body).expect(201);
      const theirs = await create(other, { ...body, client_code: other.clientCode, profile_name: 'Other Client Person' }).expect(201);
      expect(theirs.body.client_code).toBe(other.clientCode);
      expect((await fetch(tenant, body.client_profile_id as string).expect(200)).body.profile_name).toBe(body.profile_name);
      expect((await fetch(other, body.client_profile_id as string).expect(200)).body.profile_name).toBe('Other Client Person');
    });
  });

  describe('fetch', () => {
    it('returns msisdns as strings, timestamps, the client and the wallets with their balances', async () => {
      const body = profileBody(tenant, { profile_msisdn: '+254711000111', contact_person_msisdn: '254722000222' });
      const created = await create(tenant, body).expect(201);

      const empty = await fetch(tenant, body.client_profile_id as string).expect(200);
      expect(empty.body.accounts).toEqual([]);

      const type = await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: tenant.clientCode, account_type_name: 'Savings' })
        .expect(201);
      const wallet = await http()
        .post('/api/v1/accounts')
        .set('authorization', tenant.auth)
        .send({
          client_code: tenant.clientCode,
          client_profile_id: body.client_profile_id,
          account_type_code: type.body.account_type_code,
          account_name: 'Savings wallet',
          currency: 'USD',
          minimum_balance: 5,
          can_overdraw: true,
          status: 'PRE_ACTIVE',
          status_description: 'awaiting KYC',
        })
        .expect(201);

      const res = await fetch(tenant, body.client_profile_id as string).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          profile_id: created.body.profile_id,
          client_profile_id: body.client_profile_id,
          profile_name: body.profile_name,
          profile_type: body.profile_type,
          profile_email: body.profile_email,
          profile_msisdn: '+254711000111',
          contact_person_msisdn: '254722000222',
          contact_person_name: body.contact_person_name,
          contact_person_email: body.contact_person_email,
          identification_number: body.identification_number,
          physical_address: body.physical_address,
          country: body.country,
          is_active: 1,
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
          client: { client_id: tenant.clientId, client_code: tenant.clientCode },
        }),
      );
      expect(res.body.accounts).toEqual([
        {
          account_id: wallet.body.account_id,
          account_name: 'Savings wallet',
          account_number: wallet.body.account_number,
          currency: 'USD',
          minimum_balance: '5.0000',
          can_overdraw: true,
          status: 'PRE_ACTIVE',
          status_description: 'awaiting KYC',
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
          current_balance: '0.0000',
        },
      ]);
    });

    it('answers 404 "Profile not found" for an unknown profile', async () => {
      const res = await fetch(tenant, 'no-such-profile').expect(404);
      expect(res.body).toEqual({ status: 404, message: 'Profile not found', code: 'HttpException' });
    });

    it("answers 404 for another client's profile, exactly as for a missing one", async () => {
      const body = profileBody(other, { client_code: other.clientCode });
      await create(other, body).expect(201);
      const res = await fetch(tenant, body.client_profile_id as string).expect(404);
      expect(res.body).toEqual({ status: 404, message: 'Profile not found', code: 'HttpException' });
    });
  });

  describe('ACTIVATE / DEACTIVATE', () => {
    it('DEACTIVATE flips is_active to 0 with status INACTIVE; ACTIVATE flips it back', async () => {
      const body = profileBody(tenant);
      await create(tenant, body).expect(201);
      const id = body.client_profile_id as string;
      const before = await fetch(tenant, id).expect(200);

      const off = await command(tenant, id, 'DEACTIVATE').expect(200);
      expect(off.body).toEqual({ id, status: 'INACTIVE', message: expect.any(String) });
      const deactivated = await fetch(tenant, id).expect(200);
      expect(deactivated.body.is_active).toBe(0);
      expect(deactivated.body.status).toBe('INACTIVE');
      expect(Date.parse(deactivated.body.updated_at)).toBeGreaterThan(Date.parse(before.body.updated_at));

      const on = await command(tenant, id, 'ACTIVATE').expect(200);
      expect(on.body).toEqual({ id, status: 'ACTIVE', message: expect.any(String) });
      const activated = await fetch(tenant, id).expect(200);
      expect(activated.body.is_active).toBe(1);
      expect(activated.body.status).toBe('ACTIVE');
    });

    it('repeating a command is a 200 that leaves the state as it is', async () => {
      const body = profileBody(tenant);
      await create(tenant, body).expect(201);
      const id = body.client_profile_id as string;
      expect((await command(tenant, id, 'ACTIVATE').expect(200)).body).toEqual({ id, status: 'ACTIVE', message: expect.any(String) });
      expect((await command(tenant, id, 'ACTIVATE').expect(200)).body.status).toBe('ACTIVE');
      await command(tenant, id, 'DEACTIVATE').expect(200);
      expect((await command(tenant, id, 'DEACTIVATE').expect(200)).body.status).toBe('INACTIVE');
      expect((await fetch(tenant, id).expect(200)).body.is_active).toBe(0);
    });

    it('a deactivated profile cannot get a new wallet', async () => {
      const body = profileBody(tenant);
      await create(tenant, body).expect(201);
      await command(tenant, body.client_profile_id as string, 'DEACTIVATE').expect(200);
      const type = await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: tenant.clientCode, account_type_name: 'Main' })
        .expect(201);
      await http()
        .post('/api/v1/accounts')
        .set('authorization', tenant.auth)
        .send({
          client_code: tenant.clientCode,
          client_profile_id: body.client_profile_id,
          account_type_code: type.body.account_type_code,
          account_name: 'Nope',
          currency: 'KES',
          minimum_balance: 0,
          can_overdraw: false,
          status: 'ACTIVE',
        })
        .expect(400);
      expect((await fetch(tenant, body.client_profile_id as string).expect(200)).body.accounts).toEqual([]);
    });

    it('answers 404 "Profile not found" for an unknown profile', async () => {
      const res = await command(tenant, `missing-${uniqueCode()}`, 'ACTIVATE').expect(404);
      expect(res.body).toEqual({ status: 404, message: 'Profile not found', code: 'HttpException' });
    });

    it.each([['SUSPEND'], ['activate'], ['CLOSE'], [''], [undefined]])('answers 400 with a message array for command %p', async (cmd) => {
      const body = profileBody(tenant);
      await create(tenant, body).expect(201);
      const res = await command(tenant, body.client_profile_id as string, cmd).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
      expect(res.body.message.join(' ')).toContain('command');
      expect((await fetch(tenant, body.client_profile_id as string).expect(200)).body.is_active).toBe(1);
    });

    it("answers 404 for another client's profile and leaves it untouched", async () => {
      const body = profileBody(other, { client_code: other.clientCode });
      await create(other, body).expect(201);
      const res = await command(tenant, body.client_profile_id as string, 'DEACTIVATE').expect(404);
      expect(res.body).toEqual({ status: 404, message: 'Profile not found', code: 'HttpException' });
      const theirs = await fetch(other, body.client_profile_id as string).expect(200);
      expect(theirs.body.is_active).toBe(1);
      expect(theirs.body.status).toBe('ACTIVE');
    });
  });
});
