import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTenant, createTestApp, TestTenant } from '../support/test-app';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('wallet types (POST/GET /api/v1/account-types)', () => {
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => (app = await createTestApp()));
  afterAll(async () => app.close());

  const createType = (t: TestTenant, body: Record<string, unknown>) =>
    http()
      .post('/api/v1/account-types')
      .set('authorization', t.auth)
      .send({ client_code: t.clientCode, ...body });
  const list = (t: TestTenant, query = '', body?: unknown) => {
    const req = http().get(`/api/v1/account-types${query}`).set('authorization', t.auth);
    return body === undefined ? req : req.send(body as object);
  };

  /** A tenant with `n` types named T01..Tnn, created in that order; every third one inactive. */
  async function tenantWithTypes(n: number): Promise<{ tenant: TestTenant; names: string[] }> {
    const tenant = await createTenant(app);
    const names: string[] = [];
    for (let i = 1; i <= n; i++) {
      const name = `T${String(i).padStart(2, '0')}`;
      await createType(tenant, { account_type_name: name, is_active: i % 3 === 0 ? 0 : 1 }).expect(201);
      names.push(name);
    }
    return { tenant, names };
  }

  describe('create', () => {
    it('answers 201 with a generated account_type_code and the record fields', async () => {
      const tenant = await createTenant(app);
      const res = await createType(tenant, { account_type_name: 'Savings', account_type_description: 'Long-term savings' }).expect(201);
      expect(res.body).toEqual({
        account_type_id: expect.any(String),
        account_type_code: expect.stringMatching(/^\S{1,32}$/),
        account_type_name: 'Savings',
        account_type_description: 'Long-term savings',
        is_active: 1,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
    });

    it('generates a distinct code for every type, across clients too', async () => {
      const a = await createTenant(app);
      const b = await createTenant(app);
      const codes = [
        (await createType(a, { account_type_name: 'One' }).expect(201)).body.account_type_code,
        (await createType(a, { account_type_name: 'One' }).expect(201)).body.account_type_code,
        (await createType(b, { account_type_name: 'One' }).expect(201)).body.account_type_code,
      ];
      expect(new Set(codes).size).toBe(3);
    });

    it('defaults is_active to 1, keeps 0 when given, and has no description unless given', async () => {
      const tenant = await createTenant(app);
      const active = await createType(tenant, { account_type_name: 'Default' }).expect(201);
      expect(active.body.is_active).toBe(1);
      expect(active.body.account_type_description).toBeNull();
      const inactive = await createType(tenant, { account_type_name: 'Off', is_active: 0 }).expect(201);
      expect(inactive.body.is_active).toBe(0);
    });

    it('the generated code is what a wallet is created with', async () => {
      const tenant = await createTenant(app);
      const type = await createType(tenant, { account_type_name: 'Current' }).expect(201);
      const listed = await list(tenant).expect(200);
      expect(listed.body.records.map((r: { account_type_code: string }) => r.account_type_code)).toEqual([type.body.account_type_code]);
    });
  });

  describe('list', () => {
    it('answers the list envelope with metadata, statistics and records (defaults page 1, limit 10)', async () => {
      const { tenant, names } = await tenantWithTypes(12);
      const res = await list(tenant).expect(200);
      expect(res.body.metadata).toEqual({ page: 1, per_page: 10, total_count: 12 });
      expect(res.body.statistics).toEqual([
        { name: 'active', count: 8 },
        { name: 'inactive', count: 4 },
      ]);
      expect(res.body.records).toHaveLength(10);
      expect(res.body.records.map((r: { account_type_name: string }) => r.account_type_name)).toEqual(names.slice(0, 10));
      for (const record of res.body.records) {
        expect(record).toEqual({
          account_type_id: expect.any(String),
          account_type_code: expect.any(String),
          account_type_name: expect.any(String),
          account_type_description: null,
          is_active: expect.any(Number),
          is_mandatory_account: 0,
          is_default: 0,
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
          client: { client_id: tenant.clientId, client_code: tenant.clientCode },
        });
      }
      const byName = Object.fromEntries(
        res.body.records.map((r: { account_type_name: string; is_active: number }) => [r.account_type_name, r.is_active]),
      );
      expect(byName.T03).toBe(0);
      expect(byName.T04).toBe(1);
    });

    it('an empty client lists nothing, with zero counts', async () => {
      const tenant = await createTenant(app);
      const res = await list(tenant).expect(200);
      expect(res.body).toEqual({
        metadata: { page: 1, per_page: 10, total_count: 0 },
        statistics: [
          { name: 'active', count: 0 },
          { name: 'inactive', count: 0 },
        ],
        records: [],
      });
    });

    it('takes page and limit from the query string', async () => {
      const { tenant, names } = await tenantWithTypes(7);
      const res = await list(tenant, '?page=2&limit=3').expect(200);
      expect(res.body.metadata).toEqual({ page: 2, per_page: 3, total_count: 7 });
      expect(res.body.records.map((r: { account_type_name: string }) => r.account_type_name)).toEqual(names.slice(3, 6));
      const last = await list(tenant, '?page=3&limit=3').expect(200);
      expect(last.body.records.map((r: { account_type_name: string }) => r.account_type_name)).toEqual(names.slice(6, 7));
      const beyond = await list(tenant, '?page=4&limit=3').expect(200);
      expect(beyond.body.records).toEqual([]);
      expect(beyond.body.metadata.total_count).toBe(7);
    });

    it('takes page and limit from a JSON body on the GET, as the wallet document sends them', async () => {
      const { tenant, names } = await tenantWithTypes(7);
      const res = await list(tenant, '', { page: 2, limit: 3 }).expect(200);
      expect(res.body.metadata).toEqual({ page: 2, per_page: 3, total_count: 7 });
      expect(res.body.records.map((r: { account_type_name: string }) => r.account_type_name)).toEqual(names.slice(3, 6));
    });

    it('a GET body that is not valid JSON is a 400, and one naming another client is a 403', async () => {
      const tenant = await createTenant(app);
      const other = await createTenant(app);
      const bad = await http()
        .get('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .set('content-type', 'application/json')
        .send('{"page": 2,')
        .expect(400);
      expect(bad.body).toEqual({ status: 400, message: expect.anything(), code: 'HttpException' });
      const foreign = await list(tenant, '', { client_code: other.clientCode, page: 1, limit: 10 }).expect(403);
      expect(foreign.body).toEqual({ status: 403, message: expect.any(String), code: 'HttpException' });
      await list(tenant, '', { client_code: tenant.clientCode, page: 1, limit: 10 }).expect(200);
    });

    it('the query string wins over the body when both are given', async () => {
      const { tenant, names } = await tenantWithTypes(5);
      const res = await list(tenant, '?page=1&limit=2', { page: 2, limit: 3 }).expect(200);
      expect(res.body.metadata).toEqual({ page: 1, per_page: 2, total_count: 5 });
      expect(res.body.records.map((r: { account_type_name: string }) => r.account_type_name)).toEqual(names.slice(0, 2));
    });

    it('accepts limit 100 and refuses 101 with 400', async () => {
      const { tenant } = await tenantWithTypes(2);
      expect((await list(tenant, '?limit=100').expect(200)).body.metadata.per_page).toBe(100);
      const res = await list(tenant, '?limit=101').expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
      expect(res.body.message.join(' ')).toContain('limit');
      const fromBody = await list(tenant, '', { limit: 101 }).expect(400);
      expect(fromBody.body.message.join(' ')).toContain('limit');
    });

    it.each([
      ['?page=0', 'page'],
      ['?page=-1', 'page'],
      ['?page=abc', 'page'],
      ['?page=1.5', 'page'],
      ['?limit=0', 'limit'],
      ['?limit=ten', 'limit'],
    ])('refuses %s with 400 naming %s', async (query, field) => {
      const tenant = await createTenant(app);
      const res = await list(tenant, query).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
      expect(res.body.message.join(' ')).toContain(field);
    });

    it("never lists or counts another client's types", async () => {
      const mine = await tenantWithTypes(2);
      const theirs = await tenantWithTypes(4);
      const res = await list(mine.tenant, '?limit=100').expect(200);
      expect(res.body.metadata.total_count).toBe(2);
      expect(res.body.statistics).toEqual([
        { name: 'active', count: 2 },
        { name: 'inactive', count: 0 },
      ]);
      expect(res.body.records.every((r: { client: { client_id: string } }) => r.client.client_id === mine.tenant.clientId)).toBe(true);
      const theirsListed = await list(theirs.tenant, '?limit=100').expect(200);
      const myIds = new Set(res.body.records.map((r: { account_type_id: string }) => r.account_type_id));
      expect(theirsListed.body.records.some((r: { account_type_id: string }) => myIds.has(r.account_type_id))).toBe(false);
      expect(theirsListed.body.metadata.total_count).toBe(4);
    });
  });
});
