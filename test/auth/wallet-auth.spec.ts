import { JwtService } from '@nestjs/jwt';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';
import { createWallet, profileBody } from '../support/wallet-fixtures';

const ERROR_SHAPE = { status: expect.any(Number), message: expect.anything(), code: 'HttpException' };

/** The claims of the tenant's real token (user, client, token version), to sign variants of it by hand. */
function liveClaims(app: NestFastifyApplication, tenant: TestTenant): { sub: string; cid: string; ccode: string; ver: number } {
  const { sub, cid, ccode, ver } = app.get(JwtService).decode(tenant.token) as { sub: string; cid: string; ccode: string; ver: number };
  return { sub, cid, ccode, ver };
}

describe('wallet authentication (POST /api/v1/auth/login and the bearer token)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallet: Awaited<ReturnType<typeof createWallet>>;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app);
    wallet = await createWallet(app, tenant);
  });
  afterAll(async () => app.close());

  /** Every route of the wallet service that exists today, each needing a token. */
  function walletEndpoints() {
    return [
      { name: 'POST /profiles', call: () => http().post('/api/v1/profiles').send(profileBody(tenant)) },
      { name: 'GET profile', call: () => http().get(`/api/v1/client-profiles/client-profile-id/${wallet.client_profile_id}`) },
      {
        name: 'POST profile command',
        call: () => http().post(`/api/v1/profiles/client-profile-id/${wallet.client_profile_id}?command=DEACTIVATE`),
      },
      {
        name: 'POST /account-types',
        call: () => http().post('/api/v1/account-types').send({ client_code: tenant.clientCode, account_type_name: 'X' }),
      },
      { name: 'GET /account-types', call: () => http().get('/api/v1/account-types') },
      {
        name: 'POST /accounts',
        call: () =>
          http().post('/api/v1/accounts').send({
            client_code: tenant.clientCode,
            client_profile_id: wallet.client_profile_id,
            account_type_code: wallet.account_type_code,
            account_name: 'Unauthorised',
            currency: 'KES',
            minimum_balance: 0,
            can_overdraw: false,
            status: 'ACTIVE',
          }),
      },
      { name: 'GET wallet', call: () => http().get(`/api/v1/accounts/account-number/${wallet.account_number}`) },
      { name: 'POST wallet command', call: () => http().post(`/api/v1/accounts/account-number/${wallet.account_number}?command=SUSPEND`) },
    ];
  }

  async function tenantRowCounts(clientId: string) {
    const [row] = await dataSource(app).query(
      `SELECT (SELECT count(*) FROM profiles WHERE client_id = $1)::int AS profiles,
              (SELECT count(*) FROM account_types WHERE client_id = $1)::int AS account_types,
              (SELECT count(*) FROM wallets WHERE client_id = $1)::int AS wallets,
              (SELECT count(*) FROM ledger_accounts WHERE client_id = $1)::int AS ledger_accounts`,
      [clientId],
    );
    return row;
  }

  describe('login', () => {
    it('returns a Bearer token that lasts 3600 s and opens the wallet API', async () => {
      const res = await http().post('/api/v1/auth/login').send({ username: tenant.username, password: tenant.password }).expect(200);
      expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
      const claims = app.get(JwtService).decode(res.body.access_token) as { exp: number; iat: number };
      expect(claims.exp - claims.iat).toBe(3600);
      await http().get('/api/v1/account-types').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    });

    it.each([
      ['a wrong password', (t: TestTenant) => ({ username: t.username, password: 'not the password' })],
      ['an unknown user', () => ({ username: 'nobody-at-all', password: 'correct horse battery' })],
      ['the username of one user with the password of another', (t: TestTenant) => ({ username: t.username, password: `${t.password}x` })],
    ])('refuses %s with 401 in the error shape', async (_name, body) => {
      const res = await http().post('/api/v1/auth/login').send(body(tenant)).expect(401);
      expect(res.body).toEqual({ status: 401, message: expect.any(String), code: 'HttpException' });
      expect(res.body.access_token).toBeUndefined();
    });

    it('gives the same message for a wrong password and an unknown user (no user enumeration)', async () => {
      const wrong = await http().post('/api/v1/auth/login').send({ username: tenant.username, password: 'nope nope' }).expect(401);
      const unknown = await http().post('/api/v1/auth/login').send({ username: 'no-such-user-x', password: 'nope nope' }).expect(401);
      expect(wrong.body.message).toBe(unknown.body.message);
    });

    it.each([
      ['username', { password: 'correct horse battery' }],
      ['password', { username: 'someone' }],
      ['both fields', {}],
    ])('answers 400 with a message array when %s is missing', async (missing, body) => {
      const res = await http().post('/api/v1/auth/login').send(body).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
      expect(res.body.message.length).toBeGreaterThan(0);
      for (const field of missing === 'both fields' ? ['username', 'password'] : [missing]) {
        expect(res.body.message.some((m: string) => m.includes(field))).toBe(true);
      }
    });
  });

  describe('every wallet endpoint refuses a request without a valid token', () => {
    const variants: Array<[string, (app: NestFastifyApplication, t: TestTenant) => string | undefined]> = [
      ['no Authorization header', () => undefined],
      ['a garbage bearer token', () => 'Bearer not-a-jwt'],
      ['an empty bearer token', () => 'Bearer '],
      ['the token without the Bearer scheme', (_a, t) => t.token],
      ['a Basic credential', (_a, t) => `Basic ${Buffer.from(`${t.username}:${t.password}`).toString('base64')}`],
      [
        'an expired token',
        (a, t) =>
          `Bearer ${a
            .get(JwtService)
            .sign(
              { ...liveClaims(a, t), iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 60 },
              { audience: 'wallet' },
            )}`,
      ],
      [
        'a token signed with another secret',
        (_a, t) =>
          `Bearer ${new JwtService({ secret: 'another-secret-another-secret-another-secret' }).sign(
            { sub: 'u', cid: t.clientId, ccode: t.clientCode },
            { audience: 'wallet', expiresIn: 3600 },
          )}`,
      ],
      [
        'a token for another audience',
        (a, t) =>
          `Bearer ${a.get(JwtService).sign({ sub: 'u', cid: t.clientId, ccode: t.clientCode }, { audience: 'gateway', expiresIn: 3600 })}`,
      ],
      ['a tampered token', (_a, t) => `Bearer ${t.token.slice(0, -2)}${t.token.endsWith('AA') ? 'BB' : 'AA'}`],
    ];

    for (const [variant, header] of variants) {
      it(`${variant} → 401 Unauthorized on every endpoint, and nothing changes`, async () => {
        const before = await tenantRowCounts(tenant.clientId);
        for (const endpoint of walletEndpoints()) {
          const value = header(app, tenant);
          const req = endpoint.call();
          const res = await (value === undefined ? req : req.set('authorization', value));
          expect({ endpoint: endpoint.name, status: res.status, body: res.body }).toEqual({
            endpoint: endpoint.name,
            status: 401,
            body: { status: 401, message: 'Unauthorized', code: 'HttpException' },
          });
        }
        expect(await tenantRowCounts(tenant.clientId)).toEqual(before);
        const fetched = await http()
          .get(`/api/v1/accounts/account-number/${wallet.account_number}`)
          .set('authorization', tenant.auth)
          .expect(200);
        expect(fetched.body.status).toBe('ACTIVE');
        const profile = await http()
          .get(`/api/v1/client-profiles/client-profile-id/${wallet.client_profile_id}`)
          .set('authorization', tenant.auth)
          .expect(200);
        expect(profile.body.is_active).toBe(1);
      });
    }

    it('a token that has not expired yet still works (the expiry check is not simply "reject everything signed by hand")', async () => {
      const token = app
        .get(JwtService)
        .sign({ ...liveClaims(app, tenant), exp: Math.floor(Date.now() / 1000) + 60 }, { audience: 'wallet' });
      await http().get('/api/v1/account-types').set('authorization', `Bearer ${token}`).expect(200);
    });
  });

  describe('a body client_code of another client', () => {
    let other: TestTenant;
    beforeAll(async () => (other = await createTenant(app)));

    it.each([
      ['POST /profiles', '/api/v1/profiles', (t: TestTenant, o: TestTenant) => profileBody(t, { client_code: o.clientCode })],
      [
        'POST /account-types',
        '/api/v1/account-types',
        (_t: TestTenant, o: TestTenant) => ({ client_code: o.clientCode, account_type_name: 'Stolen' }),
      ],
      [
        'POST /accounts',
        '/api/v1/accounts',
        (_t: TestTenant, o: TestTenant) => ({
          client_code: o.clientCode,
          client_profile_id: wallet.client_profile_id,
          account_type_code: wallet.account_type_code,
          account_name: 'Stolen',
          currency: 'KES',
          minimum_balance: 0,
          can_overdraw: false,
          status: 'ACTIVE',
        }),
      ],
    ])('%s → 403 and nothing is written for either client', async (_name, path, body) => {
      const mine = await tenantRowCounts(tenant.clientId);
      const theirs = await tenantRowCounts(other.clientId);
      const res = await http().post(path).set('authorization', tenant.auth).send(body(tenant, other)).expect(403);
      expect(res.body).toEqual({ status: 403, message: expect.any(String), code: 'HttpException' });
      expect(await tenantRowCounts(tenant.clientId)).toEqual(mine);
      expect(await tenantRowCounts(other.clientId)).toEqual(theirs);
    });

    it('a client_code that exists nowhere is also 403, and the caller’s own code is accepted', async () => {
      await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: 'NO-SUCH-CLIENT', account_type_name: 'X' })
        .expect(403)
        .expect((res) => expect(res.body).toEqual(ERROR_SHAPE));
      await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: tenant.clientCode, account_type_name: 'Mine' })
        .expect(201);
    });
  });
});
