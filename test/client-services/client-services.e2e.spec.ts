import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appWithTenants, createTenant, dataSource, TestTenant } from '../support/test-app';
import { DECIMAL4, http, ISO_MS, serviceBody, UUID } from '../support/money-fixtures';

describe('client services (POST and GET /api/v1/client-services)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    ({ app, tenant, other } = await appWithTenants());
  });
  afterAll(async () => app.close());

  const create = (t: TestTenant, body: Record<string, unknown>) =>
    http(app).post('/api/v1/client-services').set('authorization', t.auth).send(body);
  const list = (t: TestTenant, query = '') => http(app).get(`/api/v1/client-services${query}`).set('authorization', t.auth);

  describe('create', () => {
    it('answers 201 with a client_service_id and a generated client_service_code, and echoes every documented field', async () => {
      const body = serviceBody(tenant, {
        client_service_name: 'Merchant payments',
        has_transaction_fee: true,
        transaction_fee_type: 'FIXED',
        transaction_fee: 12.5,
        minimum_transaction_amount: 10,
        maximum_transaction_amount: 250000.75,
        is_active: 1,
      });
      const res = await create(tenant, body).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          client_service_id: expect.stringMatching(UUID),
          client_service_code: expect.stringMatching(/^\S+$/),
          client_service_name: 'Merchant payments',
          client_code: tenant.clientCode,
          has_transaction_fee: true,
          transaction_fee_type: 'FIXED',
          transaction_fee: '12.5000',
          minimum_transaction_amount: '10.0000',
          maximum_transaction_amount: '250000.7500',
          is_active: 1,
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
          service: expect.objectContaining({ service_code: 'CUSTOM_SERVICE' }),
        }),
      );
      const again = await create(tenant, body).expect(201);
      expect(again.body.client_service_code).not.toBe(res.body.client_service_code);
      expect(again.body.client_service_id).not.toBe(res.body.client_service_id);
    });

    it('accepts a service without a fee and stores fee 0 with no fee type', async () => {
      const res = await create(tenant, serviceBody(tenant, { has_transaction_fee: false })).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({ has_transaction_fee: false, transaction_fee_type: null, transaction_fee: '0.0000' }),
      );
    });

    it('stores a PERCENTAGE fee and tiers, tiers shown as decimal strings', async () => {
      const pct = await create(
        tenant,
        serviceBody(tenant, { has_transaction_fee: true, transaction_fee_type: 'PERCENTAGE', transaction_fee: 2.5 }),
      ).expect(201);
      expect(pct.body).toEqual(
        expect.objectContaining({ transaction_fee_type: 'PERCENTAGE', transaction_fee: '2.5000', transaction_fee_tiers: [] }),
      );

      const tiers = [
        { minimum_amount: 1, maximum_amount: 1000, fee_type: 'FIXED', fee: 5 },
        { minimum_amount: 1000.0001, maximum_amount: 100000, fee_type: 'PERCENTAGE', fee: 1.25 },
      ];
      const tiered = await create(tenant, serviceBody(tenant, { has_transaction_fee: true, transaction_fee_tiers: tiers })).expect(201);
      expect(tiered.body.transaction_fee_tiers).toEqual([
        { minimum_amount: '1.0000', maximum_amount: '1000.0000', fee_type: 'FIXED', fee: '5.0000' },
        { minimum_amount: '1000.0001', maximum_amount: '100000.0000', fee_type: 'PERCENTAGE', fee: '1.2500' },
      ]);
    });

    it('refuses minimum_transaction_amount above maximum_transaction_amount with 400 and stores nothing', async () => {
      const before = await countServices(tenant.clientId);
      const res = await create(tenant, serviceBody(tenant, { minimum_transaction_amount: 500, maximum_transaction_amount: 100 })).expect(
        400,
      );
      expect(res.body).toEqual({ status: 400, message: expect.anything(), code: 'HttpException' });
      expect(JSON.stringify(res.body.message)).toMatch(/minimum_transaction_amount/);
      expect(await countServices(tenant.clientId)).toBe(before);
    });

    it('refuses a fee service with neither a fee type nor tiers, a percentage above 100, and a tier with min > max', async () => {
      const before = await countServices(tenant.clientId);
      await create(tenant, serviceBody(tenant, { has_transaction_fee: true })).expect(400);
      await create(
        tenant,
        serviceBody(tenant, { has_transaction_fee: true, transaction_fee_type: 'PERCENTAGE', transaction_fee: 100.5 }),
      ).expect(400);
      await create(
        tenant,
        serviceBody(tenant, {
          has_transaction_fee: true,
          transaction_fee_tiers: [{ minimum_amount: 50, maximum_amount: 10, fee_type: 'FIXED', fee: 1 }],
        }),
      ).expect(400);
      await create(tenant, serviceBody(tenant, { has_transaction_fee: true, transaction_fee_type: 'FLAT', transaction_fee: 1 })).expect(
        400,
      );
      await create(tenant, serviceBody(tenant, { service_code: 'OTHER_SERVICE' })).expect(400);
      expect(await countServices(tenant.clientId)).toBe(before);
    });

    it("refuses another client's client_code with 403", async () => {
      const res = await create(tenant, serviceBody(other)).expect(403);
      expect(res.body).toEqual({ status: 403, message: expect.any(String), code: 'HttpException' });
    });

    it('needs a token', async () => {
      await http(app).post('/api/v1/client-services').send(serviceBody(tenant)).expect(401);
      await http(app).get('/api/v1/client-services').expect(401);
    });
  });

  describe('list', () => {
    let listTenant: TestTenant;
    const codes: string[] = [];

    beforeAll(async () => {
      listTenant = await createTenant(app);
      const bodies = [
        serviceBody(listTenant, {
          client_service_name: 'S1',
          has_transaction_fee: true,
          transaction_fee_type: 'FIXED',
          transaction_fee: 10,
        }),
        serviceBody(listTenant, {
          client_service_name: 'S2',
          has_transaction_fee: true,
          transaction_fee_type: 'PERCENTAGE',
          transaction_fee: 1.5,
          is_active: 0,
        }),
        serviceBody(listTenant, {
          client_service_name: 'S3',
          has_transaction_fee: true,
          transaction_fee_tiers: [{ minimum_amount: 0, maximum_amount: 500, fee_type: 'FIXED', fee: 3 }],
        }),
        serviceBody(listTenant, { client_service_name: 'S4' }),
        serviceBody(listTenant, { client_service_name: 'S5', is_active: 0 }),
      ];
      for (const body of bodies) {
        const res = await create(listTenant, body).expect(201);
        codes.push(res.body.client_service_code);
      }
    });

    it('answers the list envelope with metadata, active/inactive statistics and full records', async () => {
      const res = await list(listTenant).expect(200);
      expect(res.body.metadata).toEqual({ page: 1, per_page: 10, total_count: 5 });
      expect(res.body.statistics).toEqual(
        expect.arrayContaining([
          { name: 'active', count: 3 },
          { name: 'inactive', count: 2 },
        ]),
      );
      expect(res.body.records.map((r: { client_service_code: string }) => r.client_service_code)).toEqual(codes);
      for (const record of res.body.records) {
        expect(record).toEqual(
          expect.objectContaining({
            transaction_fee_tiers: expect.any(Array),
            client_service_id: expect.stringMatching(UUID),
            client_service_name: expect.any(String),
            client_service_code: expect.any(String),
            minimum_transaction_amount: expect.stringMatching(DECIMAL4),
            maximum_transaction_amount: expect.stringMatching(DECIMAL4),
            transaction_fee: expect.stringMatching(DECIMAL4),
            is_active: expect.any(Number),
            has_transaction_fee: expect.any(Boolean),
            created_at: expect.stringMatching(ISO_MS),
            updated_at: expect.stringMatching(ISO_MS),
            service: {
              service_id: expect.any(String),
              service_name: expect.any(String),
              service_code: 'CUSTOM_SERVICE',
              service_transaction_type: 'BOTH',
            },
            client: { client_id: listTenant.clientId, client_name: expect.any(String) },
          }),
        );
      }
      const [s1, s2, s3] = res.body.records;
      expect(s1).toEqual(
        expect.objectContaining({ transaction_fee_type: 'FIXED', transaction_fee: '10.0000', is_active: 1, transaction_fee_tiers: [] }),
      );
      expect(s2).toEqual(expect.objectContaining({ transaction_fee_type: 'PERCENTAGE', transaction_fee: '1.5000', is_active: 0 }));
      expect(s3.transaction_fee_tiers).toEqual([
        { minimum_amount: '0.0000', maximum_amount: '500.0000', fee_type: 'FIXED', fee: '3.0000' },
      ]);
      expect(res.body.records[3]).toEqual(
        expect.objectContaining({ has_transaction_fee: false, transaction_fee_type: null, minimum_transaction_amount: '1.0000' }),
      );
    });

    it('pages with page/limit from the query string', async () => {
      const page2 = await list(listTenant, '?page=2&limit=2').expect(200);
      expect(page2.body.metadata).toEqual({ page: 2, per_page: 2, total_count: 5 });
      expect(page2.body.records.map((r: { client_service_code: string }) => r.client_service_code)).toEqual(codes.slice(2, 4));
      const page3 = await list(listTenant, '?page=3&limit=2').expect(200);
      expect(page3.body.records.map((r: { client_service_code: string }) => r.client_service_code)).toEqual(codes.slice(4));
    });

    it('pages with page/limit from a JSON body on the GET, as the document sends them', async () => {
      const res = await list(listTenant)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ page: 2, limit: 3 }))
        .expect(200);
      expect(res.body.metadata).toEqual({ page: 2, per_page: 3, total_count: 5 });
      expect(res.body.records.map((r: { client_service_code: string }) => r.client_service_code)).toEqual(codes.slice(3));
    });

    it('refuses a limit above 100 and a non-positive page with 400', async () => {
      await list(listTenant, '?limit=101').expect(400);
      await list(listTenant, '?page=0').expect(400);
      await list(listTenant, '?limit=abc').expect(400);
    });

    it("shows only the caller's services", async () => {
      const stranger = await createTenant(app);
      const empty = await list(stranger).expect(200);
      expect(empty.body.metadata.total_count).toBe(0);
      expect(empty.body.records).toEqual([]);
      expect(empty.body.statistics).toEqual(
        expect.arrayContaining([
          { name: 'active', count: 0 },
          { name: 'inactive', count: 0 },
        ]),
      );

      const mine = await list(tenant, '?limit=100').expect(200);
      const theirs = await list(listTenant, '?limit=100').expect(200);
      const mineCodes = new Set(mine.body.records.map((r: { client_service_code: string }) => r.client_service_code));
      for (const r of theirs.body.records) expect(mineCodes.has(r.client_service_code)).toBe(false);
      for (const r of mine.body.records) expect(r.client.client_id).toBe(tenant.clientId);
    });
  });

  async function countServices(clientId: string): Promise<number> {
    const [row] = await dataSource(app).query('SELECT count(*)::int AS n FROM client_services WHERE client_id = $1', [clientId]);
    return row.n;
  }
});
