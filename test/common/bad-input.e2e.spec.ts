import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';
import { profileBody } from '../support/wallet-fixtures';

/**
 * Malformed input on every create endpoint: each must be a 4xx in the wallet error shape, never a 5xx, and must
 * write nothing. String limits are those of provider contract §10.
 */

type Body = Record<string, unknown>;
type FieldKind = 'text' | 'email' | 'msisdn' | 'enum' | 'flag01' | 'boolean' | 'money' | 'currency' | 'client_code';
interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  max?: number;
  /** Names an existing record (a profile, a wallet type, a user): a made-up value of any length is not found. */
  reference?: boolean;
}
interface Case {
  name: string;
  body: unknown;
  status: number;
  /** A field name the message must mention (validation errors only). */
  mentions?: string;
}

const digits = (n: number) => '7'.repeat(n);
const longEmail = (length: number) => `${'a'.repeat(64)}@${'b'.repeat(length - 64 - 1 - 4)}.com`;

/** Values of exactly the maximum length, which must be accepted. */
function atLimit(field: Field): unknown {
  if (field.kind === 'email') return longEmail(field.max!);
  if (field.kind === 'msisdn') return `+${digits(field.max! - 1)}`;
  return 'x'.repeat(field.max!);
}

function tooLong(field: Field): unknown {
  if (field.kind === 'email') return longEmail(field.max! + 1);
  if (field.kind === 'msisdn') return `+${digits(field.max!)}`;
  return 'x'.repeat(field.max! + 1);
}

/** Values of the wrong JSON type for a field. */
function wrongTypes(field: Field): Array<[string, unknown]> {
  switch (field.kind) {
    case 'flag01':
      return [
        ['a string', '1'],
        ['a boolean', true],
        ['2', 2],
        ['a fraction', 0.5],
      ];
    case 'boolean':
      return [
        ['a string', 'true'],
        ['a number', 1],
      ];
    case 'money':
      return [
        ['a non-numeric string', 'ten'],
        ['a boolean', true],
        ['an object', { amount: 1 }],
        ['a padded numeric string', ' 5 '],
      ];
    case 'client_code':
      return [
        ['a number', 12345],
        ['a boolean', true],
        ['an object', { code: 'x' }],
      ];
    default:
      return [
        ['a number', 12345],
        ['a boolean', true],
        ['an object', { value: 'x' }],
        ['an array', ['x']],
        ['a NUL byte', 'ab\u0000cd'],
      ];
  }
}

/** Expected status for a string client_code that is not the caller's: the tenancy check (403) comes first. */
function statusFor(field: Field, value: unknown): number {
  return field.kind === 'client_code' && typeof value === 'string' ? 403 : 400;
}

function fieldCases(valid: Body, fields: Field[]): Case[] {
  const cases: Case[] = [];
  const without = (name: string) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== name));
  for (const field of fields) {
    if (field.required) {
      cases.push({ name: `${field.name} missing`, body: without(field.name), status: 400, mentions: field.name });
      cases.push({ name: `${field.name} null`, body: { ...valid, [field.name]: null }, status: 400, mentions: field.name });
    }
    if (['text', 'email', 'msisdn', 'client_code'].includes(field.kind) && field.required) {
      cases.push({ name: `${field.name} empty`, body: { ...valid, [field.name]: '' }, status: statusFor(field, ''), mentions: field.name });
    }
    for (const [label, value] of wrongTypes(field)) {
      cases.push({
        name: `${field.name} as ${label}`,
        body: { ...valid, [field.name]: value },
        status: statusFor(field, value),
        mentions: field.name,
      });
    }
    if (field.max !== undefined) {
      const value = tooLong(field);
      cases.push({
        name: `${field.name} over ${field.max} characters`,
        body: { ...valid, [field.name]: value },
        status: statusFor(field, value),
        mentions: field.name,
      });
    }
    if (field.kind === 'email')
      cases.push({
        name: `${field.name} not an email`,
        body: { ...valid, [field.name]: 'not-an-email' },
        status: 400,
        mentions: field.name,
      });
    if (field.kind === 'msisdn') {
      cases.push({
        name: `${field.name} with letters`,
        body: { ...valid, [field.name]: '2547ABC12345' },
        status: 400,
        mentions: field.name,
      });
      cases.push({
        name: `${field.name} as a JSON number`,
        body: { ...valid, [field.name]: 254712345678 },
        status: 400,
        mentions: field.name,
      });
    }
    if (field.kind === 'enum')
      cases.push({ name: `${field.name} unknown value`, body: { ...valid, [field.name]: 'SOMETHING' }, status: 400, mentions: field.name });
    if (field.kind === 'currency')
      cases.push({ name: `${field.name} unknown code`, body: { ...valid, [field.name]: 'ABC' }, status: 400, mentions: field.name });
    if (field.kind === 'money')
      cases.push({ name: `${field.name} negative`, body: { ...valid, [field.name]: -5 }, status: 400, mentions: field.name });
  }
  return cases;
}

/** Bodies that are not a JSON object at all, or not JSON. */
interface RawCase {
  name: string;
  contentType?: string;
  payload?: string;
  status: number;
}
function rawCases(valid: Body): RawCase[] {
  return [
    { name: 'an empty JSON array', contentType: 'application/json', payload: '[]', status: 400 },
    { name: 'a JSON array holding a valid body', contentType: 'application/json', payload: JSON.stringify([valid]), status: 400 },
    { name: 'a null body', contentType: 'application/json', payload: 'null', status: 400 },
    { name: 'a JSON string', contentType: 'application/json', payload: '"hello"', status: 400 },
    { name: 'a JSON number', contentType: 'application/json', payload: '42', status: 400 },
    { name: 'a JSON boolean', contentType: 'application/json', payload: 'true', status: 400 },
    { name: 'invalid JSON', contentType: 'application/json', payload: '{"client_code": "x",', status: 400 },
    { name: 'an empty JSON body', contentType: 'application/json', payload: '', status: 400 },
    { name: 'no body at all', status: 400 },
    { name: 'a valid body sent as text/plain', contentType: 'text/plain', payload: JSON.stringify(valid), status: 415 },
    {
      name: 'a form-encoded body',
      contentType: 'application/x-www-form-urlencoded',
      payload: new URLSearchParams(Object.fromEntries(Object.entries(valid).map(([k, v]) => [k, String(v)]))).toString(),
      status: 415,
    },
  ];
}

describe('malformed input on the create endpoints', () => {
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => (app = await createTestApp()));
  afterAll(async () => app.close());

  async function rowCounts(clientId: string) {
    const [row] = await dataSource(app).query(
      `SELECT (SELECT count(*) FROM profiles WHERE client_id = $1)::int AS profiles,
              (SELECT count(*) FROM account_types WHERE client_id = $1)::int AS account_types,
              (SELECT count(*) FROM wallets WHERE client_id = $1)::int AS wallets,
              (SELECT count(*) FROM ledger_accounts WHERE client_id = $1)::int AS ledger_accounts,
              (SELECT count(*) FROM users WHERE client_id = $1)::int AS users`,
      [clientId],
    );
    return row;
  }

  function expectErrorShape(res: request.Response, status: number, context: string) {
    expect({ context, status: res.status }).toEqual({ context, status });
    expect(res.body).toEqual({ status, message: expect.anything(), code: 'HttpException' });
  }

  /** Declares the whole table of one endpoint. */
  function endpointSuite(spec: {
    title: string;
    path: string;
    fields: Field[];
    auth: boolean;
    okStatus: number;
    setup: (tenant: TestTenant) => Promise<Body>;
  }) {
    describe(spec.title, () => {
      let tenant: TestTenant;
      let valid: Body;
      beforeAll(async () => {
        tenant = await createTenant(app);
        valid = await spec.setup(tenant);
      });

      const post = () => {
        const req = http().post(spec.path);
        return spec.auth ? req.set('authorization', tenant.auth) : req;
      };

      it('accepts the valid body (the baseline every case below alters)', async () => {
        await post().send(valid).expect(spec.okStatus);
      });

      it('accepts every string field at exactly its maximum length', async () => {
        const fields = spec.fields.filter((f) => f.max !== undefined && f.kind !== 'client_code' && !f.reference);
        if (fields.length === 0) return;
        const body = { ...valid, ...Object.fromEntries(fields.map((f) => [f.name, atLimit(f)])) };
        const res = await post().send(body);
        expect({ status: res.status, body: res.body }).toEqual({ status: spec.okStatus, body: expect.anything() });
      });

      it('refuses each malformed field with a 4xx, names the field, and writes nothing', async () => {
        const cases = fieldCases(valid, spec.fields);
        expect(cases.length).toBeGreaterThan(spec.fields.length);
        for (const c of cases) {
          const before = await rowCounts(tenant.clientId);
          const res = await post().send(c.body as object);
          expectErrorShape(res, c.status, c.name);
          if (c.status === 400) {
            expect({ context: c.name, isArray: Array.isArray(res.body.message) }).toEqual({ context: c.name, isArray: true });
            const text = (res.body.message as string[]).join(' ');
            expect({ context: c.name, mentioned: text.includes(c.mentions!) }).toEqual({ context: c.name, mentioned: true });
          }
          expect({ context: c.name, counts: await rowCounts(tenant.clientId) }).toEqual({ context: c.name, counts: before });
        }
      });

      it('refuses bodies that are not a JSON object, invalid JSON and other content types with a 4xx, writing nothing', async () => {
        for (const c of rawCases(valid)) {
          const before = await rowCounts(tenant.clientId);
          let req = post();
          if (c.contentType) req = req.set('content-type', c.contentType);
          const res = await (c.payload === undefined ? req : req.send(c.payload));
          expectErrorShape(res, c.status, c.name);
          expect({ context: c.name, counts: await rowCounts(tenant.clientId) }).toEqual({ context: c.name, counts: before });
        }
      });
    });
  }

  describe('other malformed requests', () => {
    let tenant: TestTenant;
    beforeAll(async () => (tenant = await createTenant(app)));

    it('a body over the 1 MiB limit → 413 in the error shape, nothing written', async () => {
      const before = await rowCounts(tenant.clientId);
      const res = await http()
        .post('/api/v1/profiles')
        .set('authorization', tenant.auth)
        .send(profileBody(tenant, { description: 'x'.repeat(1_100_000) }));
      expectErrorShape(res, 413, 'oversized body');
      expect(await rowCounts(tenant.clientId)).toEqual(before);
    });

    it('a deeply nested value where a string belongs → 400, not a crash', async () => {
      const depth = 50_000;
      const payload = `{"client_code":"${tenant.clientCode}","account_type_name":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const res = await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .set('content-type', 'application/json')
        .send(payload);
      expectErrorShape(res, 400, 'deep nesting');
      expect(res.body.message.join(' ')).toContain('account_type_name');
      expect((await http().get('/api/v1/account-types').set('authorization', tenant.auth).expect(200)).body.metadata.total_count).toBe(0);
    });

    it.each([
      ['GET profile', 'get', '/api/v1/client-profiles/client-profile-id/ab%00cd'],
      ['profile command', 'post', '/api/v1/profiles/client-profile-id/ab%00cd?command=ACTIVATE'],
      ['GET wallet', 'get', '/api/v1/accounts/account-number/10%0000'],
      ['wallet command', 'post', '/api/v1/accounts/account-number/10%0000?command=CLOSE'],
      ['list with a NUL in the query', 'get', '/api/v1/account-types?page=1%00'],
    ])('%s with a NUL character in the URL → 400, not a 500', async (_name, method, path) => {
      const res = await (method === 'get' ? http().get(path) : http().post(path)).set('authorization', tenant.auth);
      expectErrorShape(res, 400, path);
    });

    // Fastify's router answers this one (414) before Nest sees the request, so the body is Fastify's own shape
    // (status in statusCode, code FST_ERR_MAX_PARAM_LENGTH); only the status class is asserted here.
    it('a very long path parameter is a 4xx, not a 5xx', async () => {
      const res = await http()
        .get(`/api/v1/client-profiles/client-profile-id/${'p'.repeat(5000)}`)
        .set('authorization', tenant.auth);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    });
  });

  endpointSuite({
    title: 'POST /api/v1/profiles',
    path: '/api/v1/profiles',
    auth: true,
    okStatus: 201,
    setup: async (tenant) => profileBody(tenant),
    fields: [
      { name: 'client_code', kind: 'client_code', required: true, max: 32 },
      { name: 'profile_name', kind: 'text', required: true, max: 100 },
      { name: 'profile_type', kind: 'enum', required: true },
      { name: 'client_profile_id', kind: 'text', required: true, max: 64 },
      { name: 'profile_email', kind: 'email', required: true, max: 100 },
      { name: 'profile_msisdn', kind: 'msisdn', required: true, max: 25 },
      { name: 'contact_person_name', kind: 'text', required: true, max: 100 },
      { name: 'contact_person_email', kind: 'email', required: true, max: 100 },
      { name: 'contact_person_msisdn', kind: 'msisdn', required: true, max: 25 },
      { name: 'identification_number', kind: 'text', required: true, max: 50 },
      { name: 'physical_address', kind: 'text', required: true, max: 255 },
      { name: 'country', kind: 'text', required: true, max: 64 },
      { name: 'description', kind: 'text', required: false, max: 255 },
      { name: 'is_active', kind: 'flag01', required: true },
    ],
  });

  endpointSuite({
    title: 'POST /api/v1/account-types',
    path: '/api/v1/account-types',
    auth: true,
    okStatus: 201,
    setup: async (tenant) => ({
      client_code: tenant.clientCode,
      account_type_name: 'Savings',
      account_type_description: 'for savings',
      is_active: 1,
    }),
    fields: [
      { name: 'client_code', kind: 'client_code', required: true, max: 32 },
      { name: 'account_type_name', kind: 'text', required: true, max: 100 },
      { name: 'account_type_description', kind: 'text', required: false, max: 255 },
      { name: 'is_active', kind: 'flag01', required: false },
    ],
  });

  endpointSuite({
    title: 'POST /api/v1/accounts',
    path: '/api/v1/accounts',
    auth: true,
    okStatus: 201,
    setup: async (tenant) => {
      const profile = await http().post('/api/v1/profiles').set('authorization', tenant.auth).send(profileBody(tenant)).expect(201);
      const type = await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: tenant.clientCode, account_type_name: 'Main' })
        .expect(201);
      return {
        client_code: tenant.clientCode,
        client_profile_id: profile.body.client_profile_id,
        account_type_code: type.body.account_type_code,
        account_name: 'Main wallet',
        currency: 'KES',
        minimum_balance: 0,
        can_overdraw: false,
        status: 'ACTIVE',
        status_description: 'opened',
      };
    },
    fields: [
      { name: 'client_code', kind: 'client_code', required: true, max: 32 },
      { name: 'client_profile_id', kind: 'text', required: true, max: 64, reference: true },
      { name: 'account_type_code', kind: 'text', required: true, max: 32, reference: true },
      { name: 'account_name', kind: 'text', required: true, max: 100 },
      { name: 'currency', kind: 'currency', required: true },
      { name: 'minimum_balance', kind: 'money', required: true },
      { name: 'can_overdraw', kind: 'boolean', required: true },
      { name: 'status', kind: 'enum', required: true },
      { name: 'status_description', kind: 'text', required: false, max: 255 },
    ],
  });

  endpointSuite({
    title: 'POST /api/v1/auth/login',
    path: '/api/v1/auth/login',
    auth: false,
    okStatus: 200,
    setup: async (tenant) => ({ username: tenant.username, password: tenant.password }),
    fields: [
      { name: 'username', kind: 'text', required: true, max: 100, reference: true },
      { name: 'password', kind: 'text', required: true },
    ],
  });
});
