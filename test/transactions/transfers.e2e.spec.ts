import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestTenant } from '../support/test-app';
import {
  balance,
  balances,
  createService,
  feeIncome,
  fixedFee,
  fmt,
  fund,
  http,
  ledgerViolations,
  moneyFootprint,
  moneyTestBed,
  percentageFee,
  transfer,
  transferBody,
  UUID,
  walletSet,
  WalletSet,
} from '../support/money-fixtures';

describe('internal transfers (POST /api/v1/account-transfers)', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let fixed2: string;
  let pct: string;

  beforeAll(async () => {
    ({ app, tenant, other, wallets, noFee } = await moneyTestBed());
    fixed2 = await createService(app, tenant, fixedFee(2));
    pct = await createService(app, tenant, percentageFee(2.5));
  });
  afterAll(async () => app.close());

  it('answers both records, cross-linked, with the fee charged to the source', async () => {
    const from = await wallets.create();
    const to = await wallets.create();
    await fund(app, tenant, from, 1000);
    await fund(app, tenant, to, 50);
    const fees = await feeIncome(app, tenant.clientId);
    const body = transferBody(tenant, from, to, pct, 123.4567, {
      transaction_narration: 'Rent',
      source_transaction_data: { invoice: 7 },
      transaction_date: '2024-05-05T05:05:05.005Z',
    });
    const res = await transfer(app, tenant, body).expect(201);
    const { source_transaction: debit, destination_transaction: credit } = res.body;
    expect(debit).toEqual(
      expect.objectContaining({
        transaction_id: expect.stringMatching(UUID),
        account: from,
        client_service: pct,
        transaction_type: 'DEBIT',
        transaction_source: 'INTERNAL_TRANSFER_DEBIT',
        currency: 'KES',
        transaction_amount: '123.4567',
        transaction_fee: '3.0864',
        previous_balance: '1000.0000',
        current_balance: '873.4569',
        other_party_account: to,
        other_party_transaction_hash: credit.transaction_id,
        source_transaction_id: body.source_transaction_id,
        source_transaction_data: { invoice: 7 },
        transaction_narration: 'Rent',
        transaction_date: '2024-05-05T05:05:05.005Z',
      }),
    );
    expect(credit).toEqual(
      expect.objectContaining({
        transaction_id: expect.stringMatching(UUID),
        account: to,
        transaction_type: 'CREDIT',
        transaction_source: 'INTERNAL_TRANSFER_CREDIT',
        currency: 'KES',
        transaction_amount: '123.4567',
        transaction_fee: '0.0000',
        previous_balance: '50.0000',
        current_balance: '173.4567',
        other_party_account: from,
        other_party_transaction_hash: debit.transaction_id,
        source_transaction_id: body.source_transaction_id,
      }),
    );
    expect(await balances(app, [from, to])).toEqual(['873.4569', '173.4567']);
    expect(await feeIncome(app, tenant.clientId)).toBe(fmt(Number(fees) + 3.0864));
    for (const leg of [debit, credit]) {
      const fetched = await http(app).get(`/api/v1/transactions/${leg.transaction_id}`).set('authorization', tenant.auth).expect(200);
      expect(fetched.body).toEqual(leg);
    }
  });

  it('the source needs amount + fee above its floor', async () => {
    const from = await wallets.create();
    const to = await wallets.create();
    await fund(app, tenant, from, 100);
    const res = await transfer(app, tenant, transferBody(tenant, from, to, fixed2, 98.0001)).expect(400);
    expect(res.body.message).toMatch(/^Insufficient balance/);
    await transfer(app, tenant, transferBody(tenant, from, to, fixed2, 98)).expect(201);
    expect(await balances(app, [from, to])).toEqual(['0.0000', '98.0000']);
  });

  it('the same wallet on both sides → 400, nothing moves', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 100);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const res = await transfer(app, tenant, transferBody(tenant, account, account, fixed2, 10)).expect(400);
    expect(res.body.code).toBe('HttpException');
    expect(await balance(app, account)).toBe('100.0000');
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
  });

  it('wallets of different currencies → 400, nothing moves', async () => {
    const kes = await wallets.create();
    const usd = await wallets.create({ currency: 'USD' });
    await fund(app, tenant, kes, 100);
    const res = await transfer(app, tenant, transferBody(tenant, kes, usd, noFee, 10)).expect(400);
    expect(res.body.message).toMatch(/currenc/i);
    expect(await balances(app, [kes, usd])).toEqual(['100.0000', '0.0000']);
  });

  it('wallet states apply: the source must be ACTIVE, the destination ACTIVE or DORMANT', async () => {
    const from = await wallets.create();
    await fund(app, tenant, from, 100);
    const dormant = await wallets.create({ status: 'DORMANT' });
    const suspended = await wallets.create({ status: 'SUSPENDED' });
    await transfer(app, tenant, transferBody(tenant, from, dormant, noFee, 10)).expect(201);
    const toSuspended = await transfer(app, tenant, transferBody(tenant, from, suspended, noFee, 10)).expect(400);
    expect(toSuspended.body.message).toContain('SUSPENDED');
    const fromDormant = await transfer(app, tenant, transferBody(tenant, dormant, from, noFee, 5)).expect(400);
    expect(fromDormant.body.message).toContain('DORMANT');
    expect(await balances(app, [from, dormant, suspended])).toEqual(['90.0000', '10.0000', '0.0000']);
  });

  it("another client's wallet on either side → 404; another client's client_code → 403", async () => {
    const mine = await wallets.create();
    await fund(app, tenant, mine, 100);
    const theirs = await (await walletSet(app, other)).create();
    await fund(app, other, theirs, 100);
    await transfer(app, tenant, transferBody(tenant, mine, theirs, noFee, 10)).expect(404);
    await transfer(app, tenant, transferBody(tenant, theirs, mine, noFee, 10)).expect(404);
    await transfer(app, tenant, transferBody(tenant, mine, theirs, noFee, 10, { client_code: other.clientCode })).expect(403);
    expect(await balances(app, [mine, theirs])).toEqual(['100.0000', '100.0000']);
  });

  it('40 transfers each way between the same two wallets in parallel all succeed and balances are exact', async () => {
    const a = await wallets.create();
    const b = await wallets.create();
    await fund(app, tenant, a, 1000);
    await fund(app, tenant, b, 1000);
    const fees = await feeIncome(app, tenant.clientId);
    const requests = [];
    for (let i = 0; i < 40; i++) {
      requests.push(transfer(app, tenant, transferBody(tenant, a, b, fixed2, 7)));
      requests.push(transfer(app, tenant, transferBody(tenant, b, a, fixed2, 3)));
    }
    const results = await Promise.all(requests);
    const failures = results.filter((r) => r.status !== 201).map((r) => `${r.status} ${JSON.stringify(r.body)}`);
    expect(failures).toEqual([]);
    // a: 1000 − 40 × (7 + 2) + 40 × 3 = 760; b: 1000 − 40 × (3 + 2) + 40 × 7 = 1080
    expect(await balances(app, [a, b])).toEqual(['760.0000', '1080.0000']);
    expect(await feeIncome(app, tenant.clientId)).toBe(fmt(Number(fees) + 160));
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
