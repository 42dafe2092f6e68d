import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { CREDENTIAL_CHANNEL, CREDENTIAL_STATUS_TTL_MS, CredentialStatusService } from '../../src/auth/credential-status.service';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { UsersService } from '../../src/auth/users.service';
import { createHttpApp } from '../../src/http-app';
import { createGatewayMerchant, gateway, waitFor } from '../support/gateway-fixtures';
import { createTenant, dataSource } from '../support/test-app';

/** Well under the credential cache's lifetime (2 s), which is what a process not told of a change waits out. */
const PROMPTLY_MS = 100;

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
   * Calls `call` (a request to `asked`) until it gives `refused`, from right after `change` returned; how long that
   * took. Before the change, `call` is made twice, the second once `asked` listens for changes (it keeps answers only
   * then), so `asked` answers from its cache if it may.
   */
  async function timeToRefusal(
    asked: NestFastifyApplication,
    call: () => Promise<number>,
    accepted: number,
    refused: number,
    change: () => Promise<unknown>,
  ) {
    expect(await call()).toBe(accepted);
    // The first check starts its listening connection; whether it is up is the service's own state.
    await waitFor('the asked process to listen for credential changes', () => asked.get(CredentialStatusService)['listening']);
    expect(await call()).toBe(accepted);
    await change();
    const started = Date.now();
    for (;;) {
      const status = await call();
      if (status === refused) return Date.now() - started;
      expect(status).toBe(accepted);
      if (Date.now() - started > 5000) throw new Error('never refused');
    }
  }

  it('an API key revoked on one process: its token is refused by the other at once', async () => {
    const merchant = await createGatewayMerchant(a);
    const call = async () => (await gateway(b, merchant.token).get('/v1/transaction/1/status')).status;
    const elapsed = await timeToRefusal(b, call, 404, 401, () => a.get(ApiKeysService).revoke(merchant.clientId, merchant.consumerKey));
    expect(elapsed).toBeLessThan(PROMPTLY_MS);
  });

  it('each process keeps its cache: a change made behind its back (no announcement) is seen only when the entry ends', async () => {
    const merchant = await createGatewayMerchant(a);
    const call = async () => (await gateway(b, merchant.token).get('/v1/transaction/1/status')).status;
    const elapsed = await timeToRefusal(b, call, 404, 401, () =>
      dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [merchant.consumerKey]),
    );
    expect(elapsed).toBeGreaterThan(PROMPTLY_MS);
    expect(elapsed).toBeLessThanOrEqual(CREDENTIAL_STATUS_TTL_MS + PROMPTLY_MS);
  });

  it("a password reset on one process: the user's wallet token is refused by the other at once", async () => {
    const tenant = await createTenant(a);
    const call = async () => (await request(b.getHttpServer()).get('/api/v1/account-types').set('authorization', tenant.auth)).status;
    const elapsed = await timeToRefusal(b, call, 200, 401, () =>
      a.get(UsersService).upsert(tenant.clientId, tenant.username, 'a new password'),
    );
    expect(elapsed).toBeLessThan(PROMPTLY_MS);
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
    const elapsed = await timeToRefusal(b, call, 200, 303, signOut);
    expect(elapsed).toBeLessThan(PROMPTLY_MS);
  });

  it("a password reset on one process ends the user's portal sessions on the other at once", async () => {
    const tenant = await createTenant(a);
    const { cookie } = await portalSession(a, tenant.username, tenant.password);
    const call = async () => (await request(b.getHttpServer()).get('/portal').set('cookie', cookie)).status;
    const elapsed = await timeToRefusal(b, call, 200, 303, () =>
      a.get(UsersService).upsert(tenant.clientId, tenant.username, 'a new password'),
    );
    expect(elapsed).toBeLessThan(PROMPTLY_MS);
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
      const elapsed = await timeToRefusal(app, call, 404, 401, async () => {
        await dataSource(a).query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [lost]);
        await dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [merchant.consumerKey]);
      });
      expect(elapsed).toBeLessThan(PROMPTLY_MS);

      // It listens again (a new connection) and is back to normal: it keeps answers for speed, and an announced
      // revocation still reaches it at once.
      await waitFor('it to listen again', async () =>
        (await listeners()).some((pid) => !others.includes(pid) && !lost.includes(pid)) ? true : undefined,
      );
      const cached = await createGatewayMerchant(a);
      const cachedCall = async () => (await gateway(app, cached.token).get('/v1/transaction/1/status')).status;
      const unannounced = await timeToRefusal(app, cachedCall, 404, 401, () =>
        dataSource(a).query(`UPDATE api_keys SET revoked_at = now() WHERE consumer_key = $1`, [cached.consumerKey]),
      );
      expect(unannounced).toBeGreaterThan(PROMPTLY_MS);
      const announced = await createGatewayMerchant(a);
      const announcedCall = async () => (await gateway(app, announced.token).get('/v1/transaction/1/status')).status;
      expect(
        await timeToRefusal(app, announcedCall, 404, 401, () => a.get(ApiKeysService).revoke(announced.clientId, announced.consumerKey)),
      ).toBeLessThan(PROMPTLY_MS);
    });
  });
});
