import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CREDENTIAL_STATUS_TTL_MS } from '../../src/auth/credential-status.service';
import { GatewayAuthGuard } from '../../src/auth/gateway/gateway-auth.guard';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { APP_CONFIG, AppConfig } from '../../src/infra/config/app-config';
import { resolveConfig } from '../../src/infra/config/server-secret';
import { cliJson, runCli } from '../support/disbursement-fixtures';
import {
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  sleep,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { createTenant, dataSource } from '../support/test-app';

const UNAUTHORIZED = { statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' };
/** The sandbox secret before each database got its own: public, so tokens signed with it must be refused. */
const OLD_PUBLIC_SECRET = 'sandbox-only-secret-do-not-use-in-production-0000';

/** Every route behind the gateway token, read from the controllers (so routes added later are covered too). */
function gatewayRoutes(app: NestFastifyApplication): Array<{ method: 'get' | 'post'; path: string }> {
  const routes: Array<{ method: 'get' | 'post'; path: string }> = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as { prototype: Record<string, unknown> } | null;
      if (!type || !(Reflect.getMetadata(GUARDS_METADATA, type) ?? []).includes(GatewayAuthGuard)) continue;
      const base = Reflect.getMetadata(PATH_METADATA, type) as string;
      for (const name of Object.getOwnPropertyNames(type.prototype)) {
        const handler = type.prototype[name] as object;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || method === undefined) continue;
        const full = `/${base}/${path}`.replace(/\/+/g, '/').replace(/\/$/, '').replace(/:\w+/g, 'X1');
        routes.push({ method: method === RequestMethod.POST ? 'post' : 'get', path: full });
      }
    }
  }
  return routes;
}

/**
 * API keys and tokens (issue 11 item 5; provider contract §8): keys are listed without secrets and revoked with
 * every token issued for them; several keys live side by side; a password reset ends the user's wallet tokens;
 * a sandbox database has a random server secret of its own that every process on it shares.
 */
describe('API keys, token revocation and the server secret', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  const http = () => request(app.getHttpServer());
  const cli = (...args: string[]) => runCli(sandbox.db.url, ...args);

  beforeAll(async () => {
    // JWT_SECRET empty: the sandbox uses its database's own secret, whatever the caller's environment holds.
    sandbox = await startIsolatedSandbox({ JWT_SECRET: '' }, 'api');
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  async function token(consumer_key: string, consumer_secret: string): Promise<string> {
    const res = await http().post('/v1/auth').send({ consumer_key, consumer_secret }).expect(200);
    return res.body.access_token;
  }

  /** Status of every gateway route with this token: 401 means refused before anything else looked at the request. */
  async function gatewayStatuses(accessToken: string): Promise<Array<{ route: string; status: number; body: unknown }>> {
    const results = [];
    for (const route of gatewayRoutes(app)) {
      const client = gateway(app, accessToken);
      const res = await client[route.method](route.path).send(route.method === 'post' ? {} : undefined);
      results.push({
        route: `${route.method.toUpperCase()} ${route.path}`,
        status: res.status,
        body: res.status === 401 ? res.body : null,
      });
    }
    return results;
  }

  describe('api-key:list and api-key:revoke', () => {
    it('lists the keys newest first without secrets; a second key lives beside the first', async () => {
      const second = cliJson(await cli('api-key:create', '--client', merchant.clientCode, '--json'));
      await token(second.consumer_key as string, second.consumer_secret as string);
      const listed = cliJson(await cli('api-key:list', '--client', merchant.clientCode, '--json'));
      expect(listed).toEqual({
        client_code: merchant.clientCode,
        api_keys: [
          {
            consumer_key: second.consumer_key,
            created_at: expect.any(String),
            revoked_at: null,
            last_authenticated_at: expect.any(String),
          },
          {
            consumer_key: merchant.consumerKey,
            created_at: expect.any(String),
            revoked_at: null,
            last_authenticated_at: expect.any(String),
          },
        ],
      });
      const printed = JSON.stringify(listed);
      expect(printed).not.toContain(second.consumer_secret);
      expect(printed).not.toContain(merchant.consumerSecret);
      expect(printed).not.toContain('argon2');
      // Both keys work at once (rotation): the merchant's first token still opens the gateway.
      await gateway(app, merchant.token)
        .get('/v1/fx')
        .expect((res) => expect(res.status).not.toBe(401));
    });

    it('a revoked key and every token issued for it get 401 on every gateway route within the bound; other keys go on', async () => {
      const doomed = cliJson(await cli('api-key:create', '--client', merchant.clientCode, '--json'));
      const doomedToken = await token(doomed.consumer_key as string, doomed.consumer_secret as string);
      const routes = gatewayRoutes(app);
      expect(routes.length).toBeGreaterThanOrEqual(15);
      // Before: no route refuses the token (404, 400 and 200 answers all mean it passed authentication).
      expect((await gatewayStatuses(doomedToken)).filter((r) => r.status === 401)).toEqual([]);

      const revoked = cliJson(
        await cli('api-key:revoke', '--client', merchant.clientCode, '--key', doomed.consumer_key as string, '--json'),
      );
      const revokedAt = Date.now();
      expect(revoked).toEqual({ client_code: merchant.clientCode, consumer_key: doomed.consumer_key, revoked_at: expect.any(String) });
      // No new token, at once.
      const auth = await http().post('/v1/auth').send({ consumer_key: doomed.consumer_key, consumer_secret: doomed.consumer_secret });
      expect({ status: auth.status, body: auth.body }).toEqual({ status: 401, body: UNAUTHORIZED });
      // The issued token: refused once this process's cached answer expires (CREDENTIAL_STATUS_TTL_MS).
      await waitFor('the revoked token to be refused', async () => (await gateway(app, doomedToken).get('/v1/fx')).status === 401, 10_000);
      expect(Date.now() - revokedAt).toBeLessThanOrEqual(CREDENTIAL_STATUS_TTL_MS + 1000);
      const after = await gatewayStatuses(doomedToken);
      expect(after.filter((r) => r.status !== 401 || JSON.stringify(r.body) !== JSON.stringify(UNAUTHORIZED))).toEqual([]);

      // The merchant's other key is untouched.
      expect((await gateway(app, merchant.token).get('/v1/fx')).status).not.toBe(401);
      const listed = cliJson(await cli('api-key:list', '--client', merchant.clientCode, '--json')) as {
        api_keys: Array<Record<string, unknown>>;
      };
      expect(listed.api_keys.find((k) => k.consumer_key === doomed.consumer_key)!.revoked_at).toBe(revoked.revoked_at);

      // Revoking again changes nothing.
      const again = cliJson(await cli('api-key:revoke', '--client', merchant.clientCode, '--key', doomed.consumer_key as string, '--json'));
      expect(again).toEqual(revoked);
    });

    it("an unknown key, another client's key or an unknown client: non-zero exit, one stderr line, nothing revoked", async () => {
      const other = await createGatewayMerchant(app);
      for (const args of [
        ['--client', merchant.clientCode, '--key', `ck_${randomUUID()}`],
        ['--client', merchant.clientCode, '--key', other.consumerKey],
        ['--client', 'NO_SUCH_CLIENT', '--key', other.consumerKey],
      ]) {
        const result = await cli('api-key:revoke', ...args, '--json');
        expect(result.code).not.toBe(0);
        expect(result.stdout).toBe('');
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      const [{ revoked }] = await dataSource(app).query(`SELECT count(revoked_at)::int AS revoked FROM api_keys WHERE client_id = $1`, [
        other.clientId,
      ]);
      expect(revoked).toBe(0);
      await sleep(CREDENTIAL_STATUS_TTL_MS);
      expect((await gateway(app, other.token).get('/v1/fx')).status).not.toBe(401);
      const unknown = await cli('api-key:list', '--client', 'NO_SUCH_CLIENT', '--json');
      expect(unknown.code).not.toBe(0);
    });
  });

  describe('wallet tokens and password resets', () => {
    const accountTypes = (accessToken: string) => http().get('/api/v1/account-types').set('authorization', `Bearer ${accessToken}`);

    it('user:create --password on an existing user resets it, and tokens issued before get 401', async () => {
      const tenant = await createTenant(app);
      await accountTypes(tenant.token).expect(200);
      const reset = cliJson(
        await cli(
          'user:create',
          '--client',
          tenant.clientCode,
          '--username',
          tenant.username,
          '--password',
          'a brand new passphrase',
          '--json',
        ),
      );
      expect(reset).toEqual({
        user_id: expect.any(String),
        client_code: tenant.clientCode,
        username: tenant.username,
        password: 'a brand new passphrase',
      });
      await waitFor(
        'the old token to be refused',
        async () => (await accountTypes(tenant.token)).status === 401,
        CREDENTIAL_STATUS_TTL_MS + 3000,
      );
      expect((await accountTypes(tenant.token)).body).toEqual({ status: 401, message: 'Unauthorized', code: 'HttpException' });
      expect((await http().post('/api/v1/auth/login').send({ username: tenant.username, password: tenant.password })).status).toBe(401);
      const login = await http()
        .post('/api/v1/auth/login')
        .send({ username: tenant.username, password: 'a brand new passphrase' })
        .expect(200);
      await accountTypes(login.body.access_token).expect(200);
    });

    it("seed resets its user's password: the first run's tokens stop working, the second run's work", async () => {
      const code = `SEED${randomUUID().slice(0, 8).toUpperCase()}`;
      const first = cliJson(await cli('seed', '--client-code', code, '--json'));
      const firstLogin = await http().post('/api/v1/auth/login').send({ username: first.username, password: first.password }).expect(200);
      await accountTypes(firstLogin.body.access_token).expect(200);
      const second = cliJson(await cli('seed', '--client-code', code, '--json'));
      await waitFor(
        'the first token to be refused',
        async () => (await accountTypes(firstLogin.body.access_token)).status === 401,
        CREDENTIAL_STATUS_TTL_MS + 3000,
      );
      const secondLogin = await http()
        .post('/api/v1/auth/login')
        .send({ username: second.username, password: second.password })
        .expect(200);
      await accountTypes(secondLogin.body.access_token).expect(200);
    });

    it('user:create without --password on an existing username still refuses, and its tokens keep working', async () => {
      const tenant = await createTenant(app);
      const result = await cli('user:create', '--client', tenant.clientCode, '--username', tenant.username, '--json');
      expect(result.code).not.toBe(0);
      await sleep(CREDENTIAL_STATUS_TTL_MS);
      await accountTypes(tenant.token).expect(200);
    });
  });

  describe('the sandbox server secret', () => {
    it('is random per database, shared by the api and the CLI on it, and the public default no longer signs tokens', async () => {
      const [stored] = await dataSource(app).query(`SELECT value FROM settings WHERE name = 'sandbox_jwt_secret'`);
      expect(stored.value.length).toBeGreaterThanOrEqual(48);
      expect(app.get<AppConfig>(APP_CONFIG).jwtSecret).toBe(stored.value);
      // Another database gets another secret; asking again gives the same one.
      const runDatabase = new URL(sandbox.db.url);
      runDatabase.pathname = `/${process.env.TEST_DATABASE_NAME}`;
      const elsewhere = await resolveConfig({ ...process.env, DATABASE_URL: runDatabase.toString(), JWT_SECRET: '' });
      expect(elsewhere.jwtSecret).not.toBe(stored.value);
      expect((await resolveConfig({ ...process.env, DATABASE_URL: sandbox.db.url, JWT_SECRET: '' })).jwtSecret).toBe(stored.value);
      // JWT_SECRET, when given, wins.
      const given = 'x'.repeat(40);
      expect((await resolveConfig({ ...process.env, DATABASE_URL: sandbox.db.url, JWT_SECRET: given })).jwtSecret).toBe(given);

      // The claims of live tokens, signed with the old public default, are refused on both interfaces.
      const resigned = (accessToken: string) => {
        const claims = { ...(app.get(JwtService).decode(accessToken) as Record<string, unknown>) };
        delete claims.iat;
        delete claims.exp;
        return new JwtService({ secret: OLD_PUBLIC_SECRET }).sign(claims, { expiresIn: 600 });
      };
      expect((await gateway(app, resigned(merchant.token)).get('/v1/fx')).status).toBe(401);
      const tenant = await createTenant(app);
      const walletForged = resigned(tenant.token);
      expect((await http().get('/api/v1/account-types').set('authorization', `Bearer ${walletForged}`)).status).toBe(401);
      expect((await http().get('/api/v1/account-types').set('authorization', tenant.auth)).status).toBe(200);

      // Callback credentials sealed by the CLI process are opened by the api process: the same key.
      const url = sandbox.receiver.url(`/sealed/${randomUUID()}`);
      cliJson(
        await cli(
          'callback:set',
          '--client',
          merchant.clientCode,
          '--kind',
          'airtime',
          '--url',
          url,
          '--username',
          'sealed',
          '--password',
          'sealed-by-cli',
          '--json',
        ),
      );
      expect(await app.get(CallbackSettingsService).endpointFor(dataSource(app).manager, merchant.clientId, 'airtime')).toEqual({
        url,
        username: 'sealed',
        password: 'sealed-by-cli',
      });
    });
  });
});
