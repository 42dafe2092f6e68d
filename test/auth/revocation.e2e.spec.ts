import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { CREDENTIAL_CHANNEL, CREDENTIAL_STATUS_TTL_MS, CredentialStatusService } from '../../src/auth/credential-status.service';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { UsersService } from '../../src/auth/users.service';
import { createHttpApp } from '../../src/http-app';
import { createGatewayMerchant, gateway, waitFor } from '../support/gateway-fixtures';
import { createTenant, dataSource } from '../support/test-app';

/**
 * Issue 22 item 1 (provider contract §8): from the moment a revocation, a password reset or a portal sign-out
 * commits on one api process, every other api process refuses what it ended, although each keeps its credential
 * cache. Two applications on one database play the two processes; `a` makes each change, `b` is asked.
 */
describe('revocation reaches every api process at commit', () => {
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;
  /** A third process, of one test; closed with the others: Passport keeps one strategy per name for the whole Node process, the last app's. */
  let c: NestFastifyApplication | undefined;

  beforeAll(async () => {
    a = await createHttpApp('api');
    b = await createHttpApp('api');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await c?.close();
  });

  /**
   * Calls `call` (a request to `asked`) twice, the second once `asked` listens for changes (it keeps answers only then,
   * so it answers from its cache if it may), makes `change`, then calls until `call` gives `refused`: how long after
   * the first call that was. No answer can have been kept from before the first call (each test asks about a new
   * key or user), so a refusal sooner than the cache's lifetime came while the kept answer was still live: only an
   * announcement (or a forgotten cache) explains it. One not sooner is the kept answer running out.
   */
  async function refusedAfter(
    asked: NestFastifyApplication,
    call: () => Promise<number>,
    accepted: number,
    refused: number,
    change: () => Promise<unknown>,
  ) {
    const firstCall = Date.now();
    expect(await call()).toBe(accepted);
    // The first check starts its listening connection; whether it is up is the service's own state.
    await waitFor('the asked process to listen for credential changes', () => asked.get(CredentialStatusService)['listening']);
    expect(await call()).toBe(accepted);
    await change();
    for (;;) {
      const status = await call();
      if (status === refused) return Date.now() - firstCall;
      expect(status).toBe(accepted);
      if (Date.now() - firstCall > 3 * CREDENTIAL_STATUS_TTL_MS) throw new Error('never refused');
    }
  }

  it('an API key revoked on one process: its token is refused by the other at once', async () => {
    const merchant = await createGatewayMerchant(a);
    const call = async () => (await gateway(b, merchant.token).get('/v1/transaction/1/status')).status;
    const elapsed = await refusedAfter(b, call, 404, 401, () => a.get(ApiKeysService).revoke(merchant.clientId, merchant.consumerKey));
    expect(elapsed).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);
  });

  it('each process keeps its cache: a change made behind its back (no announcement) is seen only when the entry ends', async () => {
    const merchant = await createGatewayMerchant(a);
    const call = async () => (await gateway(b, merchant.token).get('/v1/transaction/1/status')).status;
    const elapsed = await refusedAfter(b, call, 404, 401, () =>
      dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [merchant.consumerKey]),
    );
    expect(elapsed).toBeGreaterThanOrEqual(CREDENTIAL_STATUS_TTL_MS);
  });

  it("a password reset on one process: the user's wallet token is refused by the other at once", async () => {
    const tenant = await createTenant(a);
    const call = async () => (await request(b.getHttpServer()).get('/api/v1/account-types').set('authorization', tenant.auth)).status;
    const elapsed = await refusedAfter(b, call, 200, 401, () =>
      a.get(UsersService).upsert(tenant.clientId, tenant.username, 'a new password'),
    );
    expect(elapsed).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);
  });

  async function portalSession(app: NestFastifyApplication, username: string, password: string): Promise<{ cookie: string; csrf: string }> {
    const login = await request(app.getHttpServer()).post('/portal/login').type('form').send({ username, password }).expect(303);
    const cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const page = await request(app.getHttpServer()).get('/portal').set('cookie', cookie).expect(200);
    return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1] };
  }

  it('a portal sign-out on one process: the session cookie is refused by the other at once', async () => {
    const tenant = await createTenant(a);
    const { cookie, csrf } = await portalSession(a, tenant.username, tenant.password);
    const call = async () => (await request(b.getHttpServer()).get('/portal').set('cookie', cookie)).status;
    const signOut = () =>
      request(a.getHttpServer()).post('/portal/logout').set('cookie', cookie).type('form').send({ _csrf: csrf }).expect(303);
    const elapsed = await refusedAfter(b, call, 200, 303, signOut);
    expect(elapsed).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);
  });

  it("a password reset on one process ends the user's portal sessions on the other at once", async () => {
    const tenant = await createTenant(a);
    const { cookie } = await portalSession(a, tenant.username, tenant.password);
    const call = async () => (await request(b.getHttpServer()).get('/portal').set('cookie', cookie)).status;
    const elapsed = await refusedAfter(b, call, 200, 303, () =>
      a.get(UsersService).upsert(tenant.clientId, tenant.username, 'a new password'),
    );
    expect(elapsed).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);
    // The new password opens a new session.
    await portalSession(b, tenant.username, 'a new password');
  });

  describe('when the listening connection is lost', () => {
    /** The backends LISTENing for credential changes on this database (one per api process that has checked a token). */
    async function listeners(): Promise<number[]> {
      const rows = await dataSource(a).query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1`, [
        `LISTEN "${CREDENTIAL_CHANNEL}"`,
      ]);
      return rows.map((row: { pid: number }) => row.pid);
    }

    it('drops its cache: a revocation no process announced is refused at once; it listens again and keeps working', async () => {
      // A process of its own, so that its LISTEN connection is told apart from every other one by appearing.
      c = await createHttpApp('api');
      const app = c;
      const others = await listeners();
      const merchant = await createGatewayMerchant(a);
      const call = async () => (await gateway(app, merchant.token).get('/v1/transaction/1/status')).status;
      expect(await call()).toBe(404);
      // (Another test file's process starting meanwhile would be cut too, which it survives the same way.)
      const lost = await waitFor('its listening connection', async () => {
        const appeared = (await listeners()).filter((pid) => !others.includes(pid));
        return appeared.length > 0 ? appeared : undefined;
      });

      // Its cache answers for the key now; then the connection is cut, and the key revoked behind every process's
      // back (no announcement): only a process that forgot what it knew refuses at once.
      const elapsed = await refusedAfter(app, call, 404, 401, async () => {
        await dataSource(a).query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [lost]);
        await dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [merchant.consumerKey]);
      });
      expect(elapsed).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);

      // It listens again (a new connection) and is back to normal: it keeps answers for speed, and an announced
      // revocation still reaches it at once.
      await waitFor('it to listen again', async () =>
        (await listeners()).some((pid) => !others.includes(pid) && !lost.includes(pid)) ? true : undefined,
      );
      const cached = await createGatewayMerchant(a);
      const cachedCall = async () => (await gateway(app, cached.token).get('/v1/transaction/1/status')).status;
      const unannounced = await refusedAfter(app, cachedCall, 404, 401, () =>
        dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [cached.consumerKey]),
      );
      expect(unannounced).toBeGreaterThanOrEqual(CREDENTIAL_STATUS_TTL_MS);
      const announced = await createGatewayMerchant(a);
      const announcedCall = async () => (await gateway(app, announced.token).get('/v1/transaction/1/status')).status;
      expect(
        await refusedAfter(app, announcedCall, 404, 401, () => a.get(ApiKeysService).revoke(announced.clientId, announced.consumerKey)),
      ).toBeLessThan(CREDENTIAL_STATUS_TTL_MS);
    });
  });
});
