import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { UsersService } from '../../src/auth/users.service';
import { ClientsService } from '../../src/clients/clients.service';
import { IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { uniqueCode } from '../support/test-app';

const PASSWORD = 'correct horse battery';

/**
 * Issue 11 §4 and issue 22 item 2: sign-in (wallet login, the portal, gateway auth: one throttle) is rate-limited
 * per credential and per client address, answering 429 with Retry-After in the interface's shape; X-Forwarded-For
 * counts only from a trusted proxy. Each app has its own database and
 * Redis, so counters start at zero.
 */
describe('sign-in throttling behind a trusted proxy', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox(
      {
        TRUSTED_PROXIES: '127.0.0.1/8',
        LOGIN_RATE_LIMIT_PER_MINUTE: '10',
        LOGIN_IP_RATE_LIMIT_PER_MINUTE: '20',
        GATEWAY_RATE_LIMIT_PER_MINUTE: '30',
      },
      'api',
    );
    app = sandbox.app;
  });
  afterAll(async () => sandbox?.close());

  async function user(): Promise<{ clientId: string; username: string }> {
    const client = await app.get(ClientsService).create(uniqueCode(), 'Throttled client');
    const username = `user-${uniqueCode().toLowerCase()}`;
    await app.get(UsersService).create(client.id, username, PASSWORD);
    return { clientId: client.id, username };
  }
  const login = (body: object, from: string) =>
    request(app.getHttpServer()).post('/api/v1/auth/login').set('x-forwarded-for', from).send(body);
  const gatewayAuth = (body: object, from: string) => request(app.getHttpServer()).post('/v1/auth').set('x-forwarded-for', from).send(body);

  it('200 wrong passwords for one user: 429 with Retry-After after the limit; another user signs in from elsewhere', async () => {
    const victim = await user();
    const other = await user();
    const answers = [];
    for (let i = 0; i < 200; i += 20) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, j) => login({ username: victim.username, password: `guess-${i + j}` }, `198.51.100.${j}`)),
        )),
      );
    }
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(190);
    for (const r of limited) {
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.body).toEqual({
        status: 429,
        message: expect.stringMatching(/Too many requests/),
        code: 'HttpException',
      });
    }
    // Even the right password is refused for the attacked account for now…
    expect((await login({ username: victim.username, password: PASSWORD }, '192.0.2.77')).status).toBe(429);
    // …but other accounts are not locked out.
    expect((await login({ username: other.username, password: PASSWORD }, '192.0.2.78')).status).toBe(200);
  });

  it('one address spraying many usernames is limited per address; others are not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => login({ username: `nobody-${i + j}`, password: 'x' }, '203.0.113.5')),
      );
      statuses.push(...batch.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const someone = await user();
    expect((await login({ username: someone.username, password: PASSWORD }, '203.0.113.6')).status).toBe(200);
  });

  it('200 wrong consumer secrets: 429 in the gateway shape; another key still gets a token', async () => {
    const attacked = await app.get(ApiKeysService).issue((await user()).clientId);
    const other = await app.get(ApiKeysService).issue((await user()).clientId);
    const answers = [];
    for (let i = 0; i < 200; i += 20) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            gatewayAuth(
              {
                consumer_key: attacked.consumer_key,
                consumer_secret: `wrong-${i + j}`,
              },
              `198.51.100.${100 + j}`,
            ),
          ),
        )),
      );
    }
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(190);
    for (const r of limited) {
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.body).toEqual({
        status_code: expect.anything(),
        status_description: expect.any(String),
        message: expect.stringMatching(/Too many requests/),
      });
    }
    expect((await gatewayAuth(other, '192.0.2.90')).status).toBe(200);
  });

  // Issue 22 item 2: the throttle is counted before the password is checked, so 200 attempts at once are limited
  // exactly as 200 in a row, on each of the three sign-ins (the portal shares wallet login's count).
  const portalLogin = (body: object, from: string) =>
    request(app.getHttpServer()).post('/portal/login').set('x-forwarded-for', from).type('form').send(body);
  it.each<
    [
      string,
      (credential: string, secret: string, from: string) => request.Test,
      (s: { clientId: string; username: string }) => Promise<string>,
    ]
  >([
    ['wallet login', (username, password, from) => login({ username, password }, from), async (u) => u.username],
    ['the portal', (username, password, from) => portalLogin({ username, password }, from), async (u) => u.username],
    [
      'gateway auth',
      (consumer_key, consumer_secret, from) => gatewayAuth({ consumer_key, consumer_secret }, from),
      async (u) => (await app.get(ApiKeysService).issue(u.clientId)).consumer_key,
    ],
  ])(
    '%s: 200 wrong secrets at once for one credential → exactly 10 checked, 190 × 429; then the right one is 429 too',
    async (_name, attempt, credentialOf) => {
      const victim = await user();
      const credential = await credentialOf(victim);
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(credential, `wrong-${i}`, `198.18.${i}.1`)));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(190);
      for (const r of answers.filter((a) => a.status === 429)) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      const right = await attempt(credential, PASSWORD, '198.19.0.1');
      expect(right.status).toBe(429);
      expect(right.headers['set-cookie']).toBeUndefined();
    },
  );

  it('the portal: 200 attempts at once from one address at different users → exactly 20 checked, 180 × 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => portalLogin({ username: `portal-nobody-${i}`, password: 'x' }, '203.0.113.99')),
    );
    expect(answers.filter((r) => r.status === 401)).toHaveLength(20);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(180);
  });

  it('a right password gives its attempt back: signing in more often than the limit is not throttled', async () => {
    const someone = await user();
    for (let i = 0; i < 15; i++) expect((await login({ username: someone.username, password: PASSWORD }, '192.0.2.120')).status).toBe(200);
  });

  it('the gateway limits requests per access token', async () => {
    const keys = await app.get(ApiKeysService).issue((await user()).clientId);
    const token = (await gatewayAuth(keys, '192.0.2.91')).body.access_token as string;
    const statuses = [];
    for (let i = 0; i < 35; i++)
      statuses.push((await request(app.getHttpServer()).get('/v1/transaction/1/status').set('x-access-token', token)).status);
    expect(statuses.slice(0, 30).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
  });
});

describe('sign-in throttling without a trusted proxy', () => {
  let sandbox: IsolatedSandbox;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ LOGIN_IP_RATE_LIMIT_PER_MINUTE: '5' }, 'api');
  });
  afterAll(async () => sandbox?.close());

  it('a spoofed X-Forwarded-For does not give each attempt a fresh address', async () => {
    const statuses = [];
    for (let i = 0; i < 8; i++) {
      const res = await request(sandbox.app.getHttpServer())
        .post('/api/v1/auth/login')
        .set('x-forwarded-for', `10.9.${i}.1`)
        .send({ username: `spoof-${i}`, password: 'x' });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
  });
});
