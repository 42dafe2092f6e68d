import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { verifySignature } from '../support/callback-signature';
import {
  chargeBody,
  CLI_JS,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { dataSource, uniqueCode } from '../support/test-app';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const SEED_KEYS = [
  'client_code',
  'username',
  'password',
  'consumer_key',
  'consumer_secret',
  'service_code',
  'settlement_account_number',
  'currency',
  'signing_secret',
].sort();

/**
 * The gateway commands of the operator CLI (provider contract §8, §10 "Seed"), run compiled as `npm run admin`
 * does, against a database of this file's own; what they print is then used against the running service.
 */
describe('admin CLI: gateway credentials, callback settings and seed', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
  }, 120_000);
  afterAll(async () => sandbox?.close());

  function cli(...args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI_JS, ...args],
        { env: { ...process.env, DATABASE_URL: sandbox.db.url, LOG_LEVEL: 'silent' }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  }

  /** Success with --json: exit 0, nothing on stderr, exactly one JSON object on stdout. */
  function json(result: CliResult): Record<string, string> {
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = result.stdout.split('\n').filter((l) => l.length > 0);
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]);
    expect(parsed).toEqual(expect.any(Object));
    expect(Array.isArray(parsed)).toBe(false);
    return parsed;
  }

  function expectOneLineError(result: CliResult, mentions?: RegExp) {
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((l) => l.trim().length > 0);
    expect(lines).toHaveLength(1);
    if (mentions) expect(lines[0]).toMatch(mentions);
  }

  async function token(consumer_key: string, consumer_secret: string): Promise<string> {
    const res = await http().post('/v1/auth').send({ consumer_key, consumer_secret });
    expect(res.status).toBe(200);
    return res.body.access_token;
  }

  describe('api-key:create', () => {
    it('prints {client_code, consumer_key, consumer_secret} once, and the key works for that client', async () => {
      const output = json(await cli('api-key:create', '--client', merchant.clientCode, '--json'));
      expect(Object.keys(output).sort()).toEqual(['client_code', 'consumer_key', 'consumer_secret']);
      expect(output.client_code).toBe(merchant.clientCode);
      const [stored] = await dataSource(app).query(`SELECT client_id, secret_hash FROM api_keys WHERE consumer_key = $1`, [
        output.consumer_key,
      ]);
      expect(stored.client_id).toBe(merchant.clientId);
      expect(stored.secret_hash).not.toContain(output.consumer_secret);

      const access = await token(output.consumer_key, output.consumer_secret);
      const charge = await gateway(app, access).post('/v1/mobile-money/charge').send(chargeBody(merchant));
      expect(charge.status).toBe(200);
      expect(charge.body.status_code).toBe(176);
      // The wrong secret for the new key is refused.
      expect(
        (await http().post('/v1/auth').send({ consumer_key: output.consumer_key, consumer_secret: merchant.consumerSecret })).status,
      ).toBe(401);
    });

    it('each run issues a new key; the earlier ones keep working', async () => {
      const first = json(await cli('api-key:create', '--client', merchant.clientCode, '--json'));
      const second = json(await cli('api-key:create', '--client', merchant.clientCode, '--json'));
      expect(second.consumer_key).not.toBe(first.consumer_key);
      expect(second.consumer_secret).not.toBe(first.consumer_secret);
      await token(first.consumer_key, first.consumer_secret);
      await token(second.consumer_key, second.consumer_secret);
    });

    it('an unknown client exits non-zero with one line on stderr', async () => {
      expectOneLineError(await cli('api-key:create', '--client', 'NO_SUCH_CLIENT', '--json'), /NO_SUCH_CLIENT/);
    });
  });

  describe('callback:set', () => {
    it('sets the URL and Basic credentials that notify_client callbacks use; the password is stored encrypted', async () => {
      const url = receiver.url(`/configured/${randomUUID()}`);
      const password = `secret-${randomUUID()}`;
      const output = json(
        await cli(
          'callback:set',
          '--client',
          merchant.clientCode,
          '--url',
          url,
          '--username',
          'acme-hooks',
          '--password',
          password,
          '--json',
        ),
      );
      expect(output).toEqual({ client_code: merchant.clientCode, callback_url: url, callback_username: 'acme-hooks' });
      const [stored] = await dataSource(app).query(`SELECT * FROM client_callback_settings WHERE client_id = $1 AND kind = 'collections'`, [
        merchant.clientId,
      ]);
      expect(stored.url).toBe(url);
      expect(JSON.stringify(stored)).not.toContain(password);

      const body = chargeBody(merchant, { callback_url: receiver.url(), notify_client: true });
      await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
      const [callback] = await waitFor('the callback at the configured URL', () =>
        receiver.at(url).length > 0 ? receiver.at(url) : undefined,
      );
      expect(callback.body.external_reference).toBe(body.external_reference);
      expect(callback.headers.authorization).toBe(`Basic ${Buffer.from(`acme-hooks:${password}`).toString('base64')}`);
      // Changing the endpoint keeps the signing secret.
      expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
    });

    it('a second run replaces the endpoint and credentials', async () => {
      const url = receiver.url(`/configured/${randomUUID()}`);
      json(
        await cli(
          'callback:set',
          '--client',
          merchant.clientCode,
          '--url',
          url,
          '--username',
          'rotated',
          '--password',
          'rotated-password-1',
          '--json',
        ),
      );
      const body = chargeBody(merchant, { callback_url: receiver.url(), notify_originator: true });
      await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
      const [callback] = await waitFor('the callback at the new URL', () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
      expect(callback.headers.authorization).toBe(`Basic ${Buffer.from('rotated:rotated-password-1').toString('base64')}`);
    });

    it('--kind payouts and --kind airtime set their own endpoint; the collections endpoint and the signing secret stay', async () => {
      const [collectionsBefore] = await dataSource(app).query(
        `SELECT url, username, password_encrypted FROM client_callback_settings WHERE client_id = $1 AND kind = 'collections'`,
        [merchant.clientId],
      );
      const [secretBefore] = await dataSource(app).query(`SELECT secret_encrypted FROM client_signing_secrets WHERE client_id = $1`, [
        merchant.clientId,
      ]);
      for (const kind of ['payouts', 'airtime']) {
        const url = receiver.url(`/${kind}/${randomUUID()}`);
        const output = json(
          await cli(
            'callback:set',
            '--client',
            merchant.clientCode,
            '--kind',
            kind,
            '--url',
            url,
            '--username',
            `${kind}-hooks`,
            '--password',
            `${kind}-pw-1`,
            '--json',
          ),
        );
        expect(output).toEqual({ client_code: merchant.clientCode, callback_url: url, callback_username: `${kind}-hooks` });
        const [stored] = await dataSource(app).query(
          `SELECT url, username FROM client_callback_settings WHERE client_id = $1 AND kind = $2`,
          [merchant.clientId, kind],
        );
        expect(stored).toEqual({ url, username: `${kind}-hooks` });
      }
      const [collectionsAfter] = await dataSource(app).query(
        `SELECT url, username, password_encrypted FROM client_callback_settings WHERE client_id = $1 AND kind = 'collections'`,
        [merchant.clientId],
      );
      expect(collectionsAfter).toEqual(collectionsBefore);
      const [secretAfter] = await dataSource(app).query(`SELECT secret_encrypted FROM client_signing_secrets WHERE client_id = $1`, [
        merchant.clientId,
      ]);
      expect(secretAfter).toEqual(secretBefore);
    });

    it.each<[string, string[]]>([
      ['an unknown --kind', ['--kind', 'refunds', '--url', 'https://merchant.example.com/cb', '--username', 'u', '--password', 'p']],
      ['an http URL to a public host', ['--url', 'http://merchant.example.com/cb', '--username', 'u', '--password', 'p']],
      ['a URL that is not one', ['--url', 'not a url', '--username', 'u', '--password', 'p']],
      ['a missing --password', ['--url', 'https://merchant.example.com/cb', '--username', 'u']],
    ])('%s exits non-zero with one line on stderr and changes nothing', async (_name, args) => {
      const settingsNow = () =>
        dataSource(app).query(`SELECT kind, url, username, updated_at FROM client_callback_settings WHERE client_id = $1 ORDER BY kind`, [
          merchant.clientId,
        ]);
      const before = await settingsNow();
      expectOneLineError(await cli('callback:set', '--client', merchant.clientCode, ...args, '--json'));
      const after = await settingsNow();
      expect(after).toEqual(before);
    });
  });

  describe('seed', () => {
    it('prints every key of §8, is idempotent, funds the settlement wallet once, and what it prints works', async () => {
      const code = uniqueCode('SEED');
      const first = json(await cli('seed', '--client-code', code, '--json'));
      expect(Object.keys(first).sort()).toEqual(SEED_KEYS);
      for (const key of SEED_KEYS) expect(first[key]).toEqual(expect.stringMatching(/\S/));
      expect(first.client_code).toBe(code);
      expect(first.currency).toBe('KES');

      // The wallet user logs in and sees the settlement wallet funded with 1,000,000.0000 KES.
      const login = await http().post('/api/v1/auth/login').send({ username: first.username, password: first.password }).expect(200);
      const wallet = await http()
        .get(`/api/v1/accounts/account-number/${first.settlement_account_number}`)
        .set('authorization', `Bearer ${login.body.access_token}`)
        .expect(200);
      expect(wallet.body).toMatchObject({ current_balance: '1000000.0000', currency: 'KES' });
      // The seeded service: FIXED fee 10, bounds 1 to 1,000,000, settling into that wallet.
      const [service] = await dataSource(app).query(
        `SELECT s.transaction_fee_type, s.transaction_fee, s.minimum_transaction_amount, s.maximum_transaction_amount, a.account_number
         FROM client_services s JOIN ledger_accounts a ON a.client_id = s.client_id AND a.id = s.settlement_account_id WHERE s.code = $1`,
        [first.service_code],
      );
      expect(service).toEqual({
        transaction_fee_type: 'FIXED',
        transaction_fee: '10.0000',
        minimum_transaction_amount: '1.0000',
        maximum_transaction_amount: '1000000.0000',
        account_number: first.settlement_account_number,
      });
      await token(first.consumer_key, first.consumer_secret);

      // A second run reuses the client, service and wallet, issues new secrets, and funds nothing again.
      const hookUrl = receiver.url(`/seeded/${randomUUID()}`);
      const second = json(
        await cli(
          'seed',
          '--client-code',
          code,
          '--callback-url',
          hookUrl,
          '--callback-username',
          'seed-hooks',
          '--callback-password',
          'seed-hooks-password',
          '--json',
        ),
      );
      expect(Object.keys(second).sort()).toEqual(SEED_KEYS);
      expect(second).toMatchObject({
        client_code: code,
        username: first.username,
        service_code: first.service_code,
        settlement_account_number: first.settlement_account_number,
        currency: 'KES',
      });
      for (const key of ['password', 'consumer_key', 'consumer_secret', 'signing_secret']) expect(second[key]).not.toBe(first[key]);
      const [counts] = await dataSource(app).query(
        `SELECT (SELECT count(*)::int FROM clients WHERE code = $1) AS clients,
                (SELECT count(*)::int FROM client_services s JOIN clients c ON c.id = s.client_id WHERE c.code = $1) AS services`,
        [code],
      );
      expect(counts).toEqual({ clients: 1, services: 1 });
      // The password was reset: the old one no longer logs in, the new one does.
      expect((await http().post('/api/v1/auth/login').send({ username: first.username, password: first.password })).status).toBe(401);
      const relogin = await http().post('/api/v1/auth/login').send({ username: second.username, password: second.password }).expect(200);
      const again = await http()
        .get(`/api/v1/accounts/account-number/${second.settlement_account_number}`)
        .set('authorization', `Bearer ${relogin.body.access_token}`)
        .expect(200);
      expect(again.body.current_balance).toBe('1000000.0000');

      // The printed keys collect a payment that settles into the seeded wallet (fee 10); the callbacks carry the
      // seeded Basic credentials and are signed with the new signing secret, not the old one.
      const access = await token(second.consumer_key, second.consumer_secret);
      const seeded = { clientCode: code, serviceCode: second.service_code } as GatewayMerchant;
      const body = chargeBody(seeded, { callback_url: receiver.url(), notify_client: true, amount: 100 });
      const charge = await gateway(app, access).post('/v1/mobile-money/charge').send(body);
      expect(charge.status).toBe(200);
      const [callback] = await waitFor('the seeded callback', () => (receiver.at(hookUrl).length > 0 ? receiver.at(hookUrl) : undefined));
      expect(callback.body).toMatchObject({ external_reference: body.external_reference, payment_status: '700' });
      expect(callback.headers.authorization).toBe(`Basic ${Buffer.from('seed-hooks:seed-hooks-password').toString('base64')}`);
      const signature = callback.headers['x-signature'] as string;
      expect(verifySignature(second.signing_secret, callback.rawBody, signature)).toBe(true);
      expect(verifySignature(first.signing_secret, callback.rawBody, signature)).toBe(false);
      const after = await http()
        .get(`/api/v1/accounts/account-number/${second.settlement_account_number}`)
        .set('authorization', `Bearer ${relogin.body.access_token}`)
        .expect(200);
      expect(after.body.current_balance).toBe('1000090.0000');
    });

    it('--callback-url without its username and password exits non-zero with one line on stderr', async () => {
      expectOneLineError(
        await cli('seed', '--client-code', uniqueCode('SEED'), '--callback-url', 'https://merchant.example.com/cb', '--json'),
      );
    });
  });
});
