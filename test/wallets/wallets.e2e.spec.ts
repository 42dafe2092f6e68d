import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { WalletStatus } from '../../src/wallets/wallet.entity';
import { balanceOf, drainAccount, fundAccount } from '../support/ledger-fixtures';
import { appWithTenants, dataSource, TestTenant } from '../support/test-app';
import { profileBody } from '../support/wallet-fixtures';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STATUSES: WalletStatus[] = ['PRE_ACTIVE', 'ACTIVE', 'DORMANT', 'SUSPENDED', 'CLOSED'];
const COMMANDS = ['ACTIVATE', 'DORMANT', 'SUSPEND', 'CLOSE'] as const;
const TARGET: Record<(typeof COMMANDS)[number], WalletStatus> = {
  ACTIVATE: 'ACTIVE',
  DORMANT: 'DORMANT',
  SUSPEND: 'SUSPENDED',
  CLOSE: 'CLOSED',
};
/** Provider contract §4, written out as the table a reader checks it against. */
const ALLOWED: Record<WalletStatus, WalletStatus[]> = {
  PRE_ACTIVE: ['ACTIVE', 'CLOSED'],
  ACTIVE: ['DORMANT', 'SUSPENDED', 'CLOSED'],
  DORMANT: ['ACTIVE', 'SUSPENDED', 'CLOSED'],
  SUSPENDED: ['ACTIVE', 'CLOSED'],
  CLOSED: [],
};

describe('wallets (POST /accounts, GET and POST /accounts/account-number/{n})', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let profileId: string;
  let typeCode: string;
  let profileRecord: Record<string, unknown>;
  const http = () => request(app.getHttpServer());

  async function profileAndType(t: TestTenant) {
    const profile = await http().post('/api/v1/profiles').set('authorization', t.auth).send(profileBody(t)).expect(201);
    const type = await http()
      .post('/api/v1/account-types')
      .set('authorization', t.auth)
      .send({ client_code: t.clientCode, account_type_name: 'Main' })
      .expect(201);
    return { profile: profile.body, typeCode: type.body.account_type_code as string };
  }

  beforeAll(async () => {
    ({ app, tenant, other } = await appWithTenants());
    const setup = await profileAndType(tenant);
    profileId = setup.profile.client_profile_id;
    profileRecord = setup.profile;
    typeCode = setup.typeCode;
  });
  afterAll(async () => app.close());

  const walletBody = (overrides: Record<string, unknown> = {}) => ({
    client_code: tenant.clientCode,
    client_profile_id: profileId,
    account_type_code: typeCode,
    account_name: 'Main wallet',
    currency: 'KES',
    minimum_balance: 0,
    can_overdraw: false,
    status: 'ACTIVE',
    ...overrides,
  });
  const createWallet = (overrides: Record<string, unknown> = {}, t: TestTenant = tenant) =>
    http().post('/api/v1/accounts').set('authorization', t.auth).send(walletBody(overrides));
  const fetchWallet = (n: string, t: TestTenant = tenant) =>
    http().get(`/api/v1/accounts/account-number/${n}`).set('authorization', t.auth);
  const command = (n: string, cmd: string | undefined, t: TestTenant = tenant) =>
    http()
      .post(`/api/v1/accounts/account-number/${n}${cmd === undefined ? '' : `?command=${cmd}`}`)
      .set('authorization', t.auth);

  async function walletCounts(clientId: string) {
    const [row] = await dataSource(app).query(
      `SELECT (SELECT count(*) FROM wallets WHERE client_id = $1)::int AS wallets,
              (SELECT count(*) FROM ledger_accounts WHERE client_id = $1)::int AS ledger_accounts`,
      [clientId],
    );
    return row;
  }

  describe('create', () => {
    it('answers 201 with a generated account_number and minimum_balance as a 4-decimal string', async () => {
      const res = await createWallet({ account_name: 'Daily', status_description: 'opened at branch' }).expect(201);
      expect(res.body).toEqual({
        account_id: expect.any(String),
        account_number: expect.stringMatching(/^\d+$/),
        account_name: 'Daily',
        currency: 'KES',
        minimum_balance: '0.0000',
        can_overdraw: false,
        status: 'ACTIVE',
        status_description: 'opened at branch',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
    });

    it('generates a different account number for every wallet', async () => {
      const numbers = new Set<string>();
      for (let i = 0; i < 3; i++) numbers.add((await createWallet().expect(201)).body.account_number);
      expect(numbers.size).toBe(3);
    });

    it.each([
      [12.5, '12.5000'],
      ['7.25', '7.2500'],
      [1000000, '1000000.0000'],
      [0.0001, '0.0001'],
      [0, '0.0000'],
      ['0', '0.0000'],
      ['0.00', '0.0000'],
    ])('keeps minimum_balance %p as %p', async (given, shown) => {
      const res = await createWallet({ minimum_balance: given, can_overdraw: true, currency: 'USD' }).expect(201);
      expect(res.body.minimum_balance).toBe(shown);
      expect(res.body.can_overdraw).toBe(true);
      expect(res.body.currency).toBe('USD');
      expect((await fetchWallet(res.body.account_number).expect(200)).body.minimum_balance).toBe(shown);
    });

    it.each(STATUSES)('starts in the status given at creation (%s)', async (status) => {
      const res = await createWallet({ status }).expect(201);
      expect(res.body.status).toBe(status);
      expect((await fetchWallet(res.body.account_number).expect(200)).body.status).toBe(status);
    });

    it('answers 404 for an unknown profile and writes nothing', async () => {
      const before = await walletCounts(tenant.clientId);
      const res = await createWallet({ client_profile_id: 'no-such-profile' }).expect(404);
      expect(res.body).toEqual({ status: 404, message: expect.any(String), code: 'HttpException' });
      expect(await walletCounts(tenant.clientId)).toEqual(before);
    });

    it('answers 404 for an unknown wallet type and writes nothing', async () => {
      const before = await walletCounts(tenant.clientId);
      const res = await createWallet({ account_type_code: 'AT0' }).expect(404);
      expect(res.body).toEqual({ status: 404, message: expect.any(String), code: 'HttpException' });
      expect(await walletCounts(tenant.clientId)).toEqual(before);
    });

    it("answers 404 for another client's profile and for another client's wallet type", async () => {
      const theirs = await profileAndType(other);
      const before = await walletCounts(tenant.clientId);
      await createWallet({ client_profile_id: theirs.profile.client_profile_id }).expect(404);
      await createWallet({ account_type_code: theirs.typeCode }).expect(404);
      expect(await walletCounts(tenant.clientId)).toEqual(before);
      expect(
        (
          await http()
            .get(`/api/v1/client-profiles/client-profile-id/${theirs.profile.client_profile_id}`)
            .set('authorization', other.auth)
            .expect(200)
        ).body.accounts,
      ).toEqual([]);
    });

    it('answers 400 for an inactive profile and writes nothing', async () => {
      const setup = await profileAndType(tenant);
      await http()
        .post(`/api/v1/profiles/client-profile-id/${setup.profile.client_profile_id}?command=DEACTIVATE`)
        .set('authorization', tenant.auth)
        .expect(200);
      const before = await walletCounts(tenant.clientId);
      const res = await createWallet({ client_profile_id: setup.profile.client_profile_id, account_type_code: setup.typeCode }).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.anything(), code: 'HttpException' });
      expect(await walletCounts(tenant.clientId)).toEqual(before);
    });

    it('answers 400 for an inactive wallet type', async () => {
      const type = await http()
        .post('/api/v1/account-types')
        .set('authorization', tenant.auth)
        .send({ client_code: tenant.clientCode, account_type_name: 'Retired', is_active: 0 })
        .expect(201);
      const before = await walletCounts(tenant.clientId);
      await createWallet({ account_type_code: type.body.account_type_code }).expect(400);
      expect(await walletCounts(tenant.clientId)).toEqual(before);
    });

    it.each([
      ['an unknown currency', { currency: 'XYZ' }],
      ['a lower-case currency', { currency: 'kes' }],
      ['a negative minimum_balance', { minimum_balance: -1 }],
      ['a minimum_balance with 5 decimals', { minimum_balance: 1.00001 }],
      ['a minimum_balance with 16 integer digits', { minimum_balance: '1234567890123456' }],
      ['a non-numeric minimum_balance', { minimum_balance: 'ten' }],
      ['an unknown status', { status: 'OPEN' }],
      ['can_overdraw as a string', { can_overdraw: 'false' }],
    ])('answers 400 with a message array for %s', async (_name, overrides) => {
      const before = await walletCounts(tenant.clientId);
      const res = await createWallet(overrides).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
      expect(await walletCounts(tenant.clientId)).toEqual(before);
    });
  });

  describe('fetch', () => {
    it('returns the wallet with its profile, client and current_balance', async () => {
      const created = await createWallet({ account_name: 'Fetch me', minimum_balance: 0 }).expect(201);
      const res = await fetchWallet(created.body.account_number).expect(200);
      expect(res.body).toEqual({
        ...created.body,
        current_balance: '0.0000',
        profile: expect.objectContaining({
          profile_id: profileRecord.profile_id,
          client_profile_id: profileId,
          profile_name: profileRecord.profile_name,
        }),
        client: { client_id: tenant.clientId, client_name: `Client ${tenant.clientCode}`, client_code: tenant.clientCode },
      });
      expect(typeof res.body.profile.profile_msisdn).toBe('string');
    });

    it('shows the ledger balance as a 4-decimal string', async () => {
      const created = await createWallet().expect(201);
      await fundAccount(app, created.body.account_id, '1234.5');
      expect((await fetchWallet(created.body.account_number).expect(200)).body.current_balance).toBe('1234.5000');
    });

    it('answers 404 for an unknown account number', async () => {
      const res = await fetchWallet('1999999999').expect(404);
      expect(res.body).toEqual({ status: 404, message: expect.any(String), code: 'HttpException' });
    });

    it("answers 404 for another client's wallet, exactly as for a missing one", async () => {
      const theirs = await profileAndType(other);
      const wallet = await createWallet(
        { client_code: other.clientCode, client_profile_id: theirs.profile.client_profile_id, account_type_code: theirs.typeCode },
        other,
      ).expect(201);
      const foreign = await fetchWallet(wallet.body.account_number).expect(404);
      const missing = await fetchWallet('1999999998').expect(404);
      expect(foreign.body).toEqual(missing.body);
    });

    it('answers 404 for the account number of a system (non-wallet) ledger account', async () => {
      const created = await createWallet().expect(201);
      await fundAccount(app, created.body.account_id, '1');
      const [settlement] = await dataSource(app).query(
        `SELECT account_number FROM ledger_accounts WHERE client_id = $1 AND kind = 'SETTLEMENT'`,
        [tenant.clientId],
      );
      await fetchWallet(settlement.account_number).expect(404);
      await command(settlement.account_number, 'CLOSE').expect(404);
    });
  });

  describe('state machine (provider contract §4)', () => {
    const cases = STATUSES.flatMap((from) => COMMANDS.map((cmd) => ({ from, cmd, to: TARGET[cmd] })));

    it.each(cases)('$from + $cmd', async ({ from, cmd, to }) => {
      const wallet = (await createWallet({ status: from }).expect(201)).body;
      const res = await command(wallet.account_number, cmd);
      const after = (await fetchWallet(wallet.account_number).expect(200)).body.status;
      if (from === to) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ account_number: wallet.account_number, status: to, message: expect.any(String) });
        expect(after).toBe(from);
      } else if (ALLOWED[from].includes(to)) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ account_number: wallet.account_number, status: to, message: expect.any(String) });
        expect(after).toBe(to);
      } else {
        expect(res.status).toBe(409);
        expect(res.body).toEqual({ status: 409, message: expect.any(String), code: 'HttpException' });
        expect(after).toBe(from);
      }
    });

    it('a wallet walks PRE_ACTIVE → ACTIVE → DORMANT → SUSPENDED → ACTIVE → CLOSED, and CLOSED is final', async () => {
      const n = (await createWallet({ status: 'PRE_ACTIVE' }).expect(201)).body.account_number;
      for (const [cmd, status] of [
        ['ACTIVATE', 'ACTIVE'],
        ['DORMANT', 'DORMANT'],
        ['SUSPEND', 'SUSPENDED'],
        ['ACTIVATE', 'ACTIVE'],
        ['CLOSE', 'CLOSED'],
      ]) {
        expect((await command(n, cmd).expect(200)).body.status).toBe(status);
        expect((await fetchWallet(n).expect(200)).body.status).toBe(status);
      }
      for (const cmd of ['ACTIVATE', 'DORMANT', 'SUSPEND']) await command(n, cmd).expect(409);
      await command(n, 'CLOSE').expect(200);
      expect((await fetchWallet(n).expect(200)).body.status).toBe('CLOSED');
    });

    it.each(['ACTIVE', 'DORMANT', 'SUSPENDED', 'PRE_ACTIVE'])(
      'CLOSE on a %s wallet with a positive balance → 409; closes once the balance is zero',
      async (status) => {
        const wallet = (await createWallet({ status }).expect(201)).body;
        await fundAccount(app, wallet.account_id, '0.0001');
        const res = await command(wallet.account_number, 'CLOSE').expect(409);
        expect(res.body).toEqual({ status: 409, message: expect.any(String), code: 'HttpException' });
        expect((await fetchWallet(wallet.account_number).expect(200)).body.status).toBe(status);
        await drainAccount(app, wallet.account_id, '0.0001');
        expect(await balanceOf(app, wallet.account_id)).toBe('0.0000');
        await command(wallet.account_number, 'CLOSE').expect(200);
        expect((await fetchWallet(wallet.account_number).expect(200)).body.status).toBe('CLOSED');
      },
    );

    it('CLOSE on an overdrawn (negative balance) wallet → 409', async () => {
      const wallet = (await createWallet({ can_overdraw: true }).expect(201)).body;
      await drainAccount(app, wallet.account_id, '25');
      expect((await fetchWallet(wallet.account_number).expect(200)).body.current_balance).toBe('-25.0000');
      await command(wallet.account_number, 'CLOSE').expect(409);
      expect((await fetchWallet(wallet.account_number).expect(200)).body.status).toBe('ACTIVE');
    });

    it.each([['OPEN'], ['close'], ['DEACTIVATE'], [''], [undefined]])(
      'invalid command %p → 400 listing the allowed commands',
      async (cmd) => {
        const wallet = (await createWallet().expect(201)).body;
        const res = await command(wallet.account_number, cmd).expect(400);
        expect(res.body).toEqual({ status: 400, message: expect.any(Array), code: 'HttpException' });
        expect(res.body.message).toContain('command must be one of the following values: CLOSE, ACTIVATE, DORMANT, SUSPEND');
        expect((await fetchWallet(wallet.account_number).expect(200)).body.status).toBe('ACTIVE');
      },
    );

    it('answers 404 for an unknown wallet', async () => {
      const res = await command('1999999997', 'ACTIVATE').expect(404);
      expect(res.body).toEqual({ status: 404, message: expect.any(String), code: 'HttpException' });
    });

    it("answers 404 for another client's wallet and leaves it as it was", async () => {
      const theirs = await profileAndType(other);
      const wallet = (
        await createWallet(
          { client_code: other.clientCode, client_profile_id: theirs.profile.client_profile_id, account_type_code: theirs.typeCode },
          other,
        ).expect(201)
      ).body;
      await command(wallet.account_number, 'SUSPEND').expect(404);
      await command(wallet.account_number, 'CLOSE').expect(404);
      expect((await fetchWallet(wallet.account_number, other).expect(200)).body.status).toBe('ACTIVE');
    });
  });
});
