import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestTenant } from '../support/test-app';
import {
  balance,
  createService,
  d,
  feeIncome,
  fixedFee,
  fmt,
  fund,
  http,
  ISO_MS,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  percentageFee,
  post,
  systemAccount,
  UUID,
  walletSet,
  WalletSet,
} from '../support/money-fixtures';

describe('credit and debit (POST /api/v1/transactions?command=CREDIT|DEBIT)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let fixed10: string;
  let pct: string;
  let tiered: string;
  let bounded: string;
  let inactive: string;
  let foreignService: string;
  let foreignWallet: string;

  beforeAll(async () => {
    ({ app, tenant, other, wallets, noFee } = await moneyTestBed());
    fixed10 = await createService(app, tenant, fixedFee(10));
    pct = await createService(app, tenant, percentageFee(2.5));
    tiered = await createService(app, tenant, {
      has_transaction_fee: true,
      transaction_fee_tiers: [
        { minimum_amount: 1, maximum_amount: 1000, fee_type: 'FIXED', fee: 5 },
        { minimum_amount: 1000.0001, maximum_amount: 100000, fee_type: 'PERCENTAGE', fee: 1.25 },
      ],
    });
    bounded = await createService(app, tenant, { minimum_transaction_amount: 100, maximum_transaction_amount: 5000 });
    inactive = await createService(app, tenant, { is_active: 0 });
    foreignService = await createService(app, other);
    foreignWallet = await (await walletSet(app, other)).create();
    await fund(app, other, foreignWallet, 1000);
  });
  afterAll(async () => app.close());

  describe('the transaction record', () => {
    it('CREDIT answers a full record, stores it, and GET /transactions/{id} returns the same record', async () => {
      const account = await wallets.create();
      const settlement = await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'KES');
      const body = moneyBody(tenant, account, fixed10, 250.5, {
        source_transaction_data: { order: 'A-17', lines: [1, 2] },
        transaction_narration: 'Top up',
        transaction_date: '2024-03-01T10:00:00.000Z',
      });
      const res = await post(app, tenant, 'CREDIT', body).expect(201);
      expect(res.body).toEqual({
        transaction_id: expect.stringMatching(UUID),
        account,
        client_service: fixed10,
        transaction_type: 'CREDIT',
        transaction_source: 'EXTERNAL_CREDIT',
        currency: 'KES',
        transaction_amount: '250.5000',
        transaction_fee: '10.0000',
        previous_balance: '0.0000',
        current_balance: '240.5000',
        other_party_account: expect.any(String),
        other_party_transaction_hash: null,
        source_transaction_id: body.source_transaction_id,
        source_transaction_data: { order: 'A-17', lines: [1, 2] },
        transaction_narration: 'Top up',
        transaction_date: '2024-03-01T10:00:00.000Z',
        original_currency: null,
        original_amount: null,
        exchange_rate: null,
      });
      const settlementAfter = await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'KES');
      expect(res.body.other_party_account).toBe(settlementAfter!.accountNumber);
      if (settlement) expect(settlement.accountNumber).toBe(settlementAfter!.accountNumber);
      expect(await balance(app, account)).toBe('240.5000');

      const fetched = await http(app).get(`/api/v1/transactions/${res.body.transaction_id}`).set('authorization', tenant.auth).expect(200);
      expect(fetched.body).toEqual(res.body);
    });

    it('DEBIT answers a record with amount and fee apart, and takes amount + fee from the wallet', async () => {
      const account = await wallets.create();
      await fund(app, tenant, account, 1000);
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, fixed10, 200)).expect(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          account,
          transaction_type: 'DEBIT',
          transaction_source: 'EXTERNAL_DEBIT',
          transaction_amount: '200.0000',
          transaction_fee: '10.0000',
          previous_balance: '1000.0000',
          current_balance: '790.0000',
          transaction_date: expect.stringMatching(ISO_MS),
          source_transaction_data: null,
          transaction_narration: null,
        }),
      );
      expect(await balance(app, account)).toBe('790.0000');
    });

    it('defaults transaction_date to now when it is not given', async () => {
      const account = await wallets.create();
      const before = Date.now();
      const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10)).expect(201);
      const date = Date.parse(res.body.transaction_date);
      expect(date).toBeGreaterThanOrEqual(before - 1000);
      expect(date).toBeLessThanOrEqual(Date.now() + 1000);
    });
  });

  describe('fees (to the fourth decimal, half-up) and fee income', () => {
    const cases: Array<{ name: string; service: () => string; amount: string; fee: string }> = [
      { name: 'no fee', service: () => noFee, amount: '123.4567', fee: '0.0000' },
      { name: 'FIXED 10', service: () => fixed10, amount: '123.4567', fee: '10.0000' },
      { name: 'PERCENTAGE 2.5 of 123.4567 = 3.0864175', service: () => pct, amount: '123.4567', fee: '3.0864' },
      { name: 'PERCENTAGE 2.5 of 100.002 = 2.50005 (an exact half rounds up)', service: () => pct, amount: '100.002', fee: '2.5001' },
      { name: 'PERCENTAGE 2.5 of 10.0006 = 0.250015', service: () => pct, amount: '10.0006', fee: '0.2500' },
      { name: 'PERCENTAGE 2.5 of 1.0198 = 0.025495', service: () => pct, amount: '1.0198', fee: '0.0255' },
      { name: 'tier 1 (FIXED 5) at its lower edge', service: () => tiered, amount: '1', fee: '5.0000' },
      { name: 'tier 1 (FIXED 5) at its upper edge', service: () => tiered, amount: '1000', fee: '5.0000' },
      { name: 'tier 2 (1.25 %) just above tier 1', service: () => tiered, amount: '1000.5', fee: '12.5063' },
      { name: 'tier 2 (1.25 %) of 2000', service: () => tiered, amount: '2000', fee: '25.0000' },
    ];

    it.each(cases)('CREDIT adds amount − fee, fee goes to FEE_INCOME: $name', async ({ service, amount, fee }) => {
      const account = await wallets.create();
      await fund(app, tenant, account, 100);
      const feeBefore = await feeIncome(app, tenant.clientId);
      if (d(fee).gte(d(amount))) {
        // A credit that the fee would swallow whole is refused rather than lowering the wallet.
        await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service(), amount)).expect(400);
        expect(await balance(app, account)).toBe('100.0000');
        expect(await feeIncome(app, tenant.clientId)).toBe(feeBefore);
        return;
      }
      const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service(), amount)).expect(201);
      expect(res.body.transaction_amount).toBe(fmt(amount));
      expect(res.body.transaction_fee).toBe(fee);
      expect(res.body.previous_balance).toBe('100.0000');
      expect(res.body.current_balance).toBe(fmt(d(100).plus(amount).minus(fee)));
      expect(await balance(app, account)).toBe(fmt(d(100).plus(amount).minus(fee)));
      expect(await feeIncome(app, tenant.clientId)).toBe(fmt(d(feeBefore).plus(fee)));
    });

    it.each(cases)('DEBIT takes amount + fee, fee goes to FEE_INCOME: $name', async ({ service, amount, fee }) => {
      const account = await wallets.create();
      await fund(app, tenant, account, 5000);
      const feeBefore = await feeIncome(app, tenant.clientId);
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, service(), amount)).expect(201);
      expect(res.body.transaction_amount).toBe(fmt(amount));
      expect(res.body.transaction_fee).toBe(fee);
      expect(res.body.current_balance).toBe(fmt(d(5000).minus(amount).minus(fee)));
      expect(await balance(app, account)).toBe(fmt(d(5000).minus(amount).minus(fee)));
      expect(await feeIncome(app, tenant.clientId)).toBe(fmt(d(feeBefore).plus(fee)));
    });

    it('a credit no larger than its fee is refused and moves nothing', async () => {
      const account = await wallets.create();
      const before = await moneyFootprint(app, tenant.clientId);
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, fixed10, 10)).expect(400);
      expect(await balance(app, account)).toBe('0.0000');
      expect(await moneyFootprint(app, tenant.clientId)).toEqual(before);
    });
  });

  describe('client service rules', () => {
    let account: string;
    beforeAll(async () => {
      account = await wallets.create();
      await fund(app, tenant, account, 10000);
    });

    it.each([
      ['CREDIT', '99.9999'],
      ['CREDIT', '5000.0001'],
      ['DEBIT', '99.9999'],
      ['DEBIT', '5000.0001'],
    ] as const)('%s of %s outside the service bounds [100, 5000] → 400, balance unchanged', async (command, amount) => {
      const res = await post(app, tenant, command, moneyBody(tenant, account, bounded, amount)).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.stringMatching(/100\.0000.*5000\.0000/), code: 'HttpException' });
      expect(await balance(app, account)).toBe('10000.0000');
    });

    it('amounts exactly at the bounds are accepted', async () => {
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, bounded, 100)).expect(201);
      await post(app, tenant, 'DEBIT', moneyBody(tenant, account, bounded, 5000)).expect(201);
      expect(await balance(app, account)).toBe('5100.0000');
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, bounded, 4900)).expect(201);
    });

    it('an inactive service → 400', async () => {
      for (const command of ['CREDIT', 'DEBIT'] as const) {
        const res = await post(app, tenant, command, moneyBody(tenant, account, inactive, 100)).expect(400);
        expect(res.body.message).toMatch(/inactive/i);
      }
      expect(await balance(app, account)).toBe('10000.0000');
    });

    it("an unknown service and another client's service → 404 alike", async () => {
      const unknown = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, 'CS-NOPE', 100)).expect(404);
      const foreign = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, foreignService, 100)).expect(404);
      expect(foreign.body).toEqual(unknown.body);
      expect(foreign.body.code).toBe('HttpException');
      expect(await balance(app, account)).toBe('10000.0000');
    });

    it("an unknown wallet and another client's wallet → 404, the other client's balance untouched", async () => {
      await post(app, tenant, 'CREDIT', moneyBody(tenant, '19999999999', noFee, 100)).expect(404);
      await post(app, tenant, 'CREDIT', moneyBody(tenant, foreignWallet, noFee, 100)).expect(404);
      await post(app, tenant, 'DEBIT', moneyBody(tenant, foreignWallet, noFee, 100)).expect(404);
      expect(await balance(app, foreignWallet)).toBe('1000.0000');
    });

    it('a system account number is not a wallet → 404', async () => {
      const settlement = await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'KES');
      await post(app, tenant, 'DEBIT', moneyBody(tenant, settlement!.accountNumber, noFee, 100)).expect(404);
    });

    it("another client's client_code → 403, nothing moves", async () => {
      const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 100, { client_code: other.clientCode })).expect(403);
      expect(res.body.code).toBe('HttpException');
      expect(await balance(app, account)).toBe('10000.0000');
    });

    it('an unknown command → 400; no token → 401', async () => {
      await http(app)
        .post('/api/v1/transactions?command=REFUND')
        .set('authorization', tenant.auth)
        .send(moneyBody(tenant, account, noFee, 1))
        .expect(400);
      await http(app)
        .post('/api/v1/transactions')
        .set('authorization', tenant.auth)
        .send(moneyBody(tenant, account, noFee, 1))
        .expect(400);
      await http(app)
        .post('/api/v1/transactions?command=CREDIT')
        .send(moneyBody(tenant, account, noFee, 1))
        .expect(401);
      expect(await balance(app, account)).toBe('10000.0000');
    });
  });

  describe('wallet states (provider contract §4)', () => {
    async function walletIn(status: string, funded: string | null) {
      if (!funded) return wallets.create({ status });
      const account = await wallets.create();
      await fund(app, tenant, account, funded);
      const command = { ACTIVE: null, DORMANT: 'DORMANT', SUSPENDED: 'SUSPEND' }[status as 'ACTIVE' | 'DORMANT' | 'SUSPENDED'];
      if (command) {
        await http(app).post(`/api/v1/accounts/account-number/${account}?command=${command}`).set('authorization', tenant.auth).expect(200);
      }
      return account;
    }

    it('ACTIVE: credit and debit', async () => {
      const account = await walletIn('ACTIVE', '100');
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10)).expect(201);
      await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 30)).expect(201);
      expect(await balance(app, account)).toBe('80.0000');
    });

    it('DORMANT: credit only; a debit → 400 naming DORMANT', async () => {
      const account = await walletIn('DORMANT', '100');
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10)).expect(201);
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 30)).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.stringContaining('DORMANT'), code: 'HttpException' });
      expect(await balance(app, account)).toBe('110.0000');
    });

    it.each(['PRE_ACTIVE', 'SUSPENDED', 'CLOSED'])('%s: neither credit nor debit → 400 naming the state', async (status) => {
      const account = await walletIn(status, status === 'SUSPENDED' ? '100' : null);
      const start = await balance(app, account);
      for (const command of ['CREDIT', 'DEBIT'] as const) {
        const res = await post(app, tenant, command, moneyBody(tenant, account, noFee, 10)).expect(400);
        expect(res.body).toEqual({ status: 400, message: expect.stringContaining(status), code: 'HttpException' });
      }
      expect(await balance(app, account)).toBe(start);
    });

    it('a wallet whose profile is deactivated can neither receive nor pay, and can again once reactivated', async () => {
      const set = await walletSet(app, tenant);
      const account = await set.create();
      await fund(app, tenant, account, 100);
      const profileCommand = (cmd: string) =>
        http(app)
          .post(`/api/v1/profiles/client-profile-id/${set.clientProfileId}?command=${cmd}`)
          .set('authorization', tenant.auth)
          .expect(200);
      await profileCommand('DEACTIVATE');
      for (const command of ['CREDIT', 'DEBIT'] as const) {
        const res = await post(app, tenant, command, moneyBody(tenant, account, noFee, 10)).expect(400);
        expect(res.body.message).toMatch(/deactivated|inactive/i);
      }
      expect(await balance(app, account)).toBe('100.0000');
      await profileCommand('ACTIVATE');
      await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 10)).expect(201);
      expect(await balance(app, account)).toBe('90.0000');
    });
  });

  describe('floors', () => {
    it('minimum_balance is respected: a debit may reach the floor, not pass it (fee included)', async () => {
      const account = await wallets.create({ minimum_balance: 100 });
      await fund(app, tenant, account, 500);
      const tooMuch = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, fixed10, 390.0001)).expect(400);
      expect(tooMuch.body).toEqual({ status: 400, message: expect.stringMatching(/^Insufficient balance/), code: 'HttpException' });
      expect(await balance(app, account)).toBe('500.0000');
      await post(app, tenant, 'DEBIT', moneyBody(tenant, account, fixed10, 390)).expect(201);
      expect(await balance(app, account)).toBe('100.0000');
      await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 0.0001)).expect(400);
      expect(await balance(app, account)).toBe('100.0000');
    });

    it('a zero floor: a debit of more than the balance → 400 "Insufficient balance…"', async () => {
      const account = await wallets.create();
      await fund(app, tenant, account, 50);
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 50.0001)).expect(400);
      expect(res.body.message).toMatch(/^Insufficient balance/);
      expect(await balance(app, account)).toBe('50.0000');
    });

    it('can_overdraw lets a debit take the wallet below its minimum balance', async () => {
      const account = await wallets.create({ can_overdraw: true });
      await fund(app, tenant, account, 50);
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, fixed10, 250)).expect(201);
      expect(res.body.current_balance).toBe('-210.0000');
      expect(await balance(app, account)).toBe('-210.0000');
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 300)).expect(201);
      expect(await balance(app, account)).toBe('90.0000');
    });
  });
});
