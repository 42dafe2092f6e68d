import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestTenant } from '../support/test-app';
import {
  balance,
  balances,
  createService,
  feeIncome,
  fund,
  http,
  ledgerViolations,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  percentageFee,
  post,
  ref,
  reverse,
  systemAccount,
  transfer,
  transferBody,
  UUID,
  walletSet,
  WalletSet,
} from '../support/money-fixtures';

/** POST /api/v1/transactions/{id}?command=REVERSE (provider contract §4). */
describe('reversals', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let pct: string;

  beforeAll(async () => {
    ({ app, tenant, other, wallets, noFee } = await moneyTestBed());
    pct = await createService(app, tenant, percentageFee(2.5));
  });
  afterAll(async () => app.close());

  async function settlementKes() {
    return (await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'KES'))!;
  }

  it('reversing a credit debits the wallet by what it received, refunds the fee, and shows the settlement side', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 10);
    const feesBefore = await feeIncome(app, tenant.clientId);
    const settlementBefore = (await settlementKes()).balance;
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, pct, 123.4567)).expect(201);
    expect(credit.body.transaction_fee).toBe('3.0864');
    expect(await balance(app, account)).toBe('130.3703');

    const res = await reverse(app, tenant, credit.body.transaction_id, { transaction_narration: 'Customer refund' }).expect(201);
    const settlement = await settlementKes();
    expect(res.body).toEqual({
      source_transaction: expect.objectContaining({
        transaction_id: expect.stringMatching(UUID),
        account,
        transaction_type: 'DEBIT',
        transaction_source: 'INTERNAL_REVERAL_DEBIT',
        currency: 'KES',
        previous_balance: '130.3703',
        current_balance: '10.0000',
        transaction_narration: 'Customer refund',
      }),
      destination_transaction: expect.objectContaining({
        transaction_id: expect.stringMatching(UUID),
        account: settlement.accountNumber,
        transaction_type: 'CREDIT',
        transaction_source: 'INTERNAL_REVERAL_CREDIT',
        currency: 'KES',
        transaction_amount: '123.4567',
      }),
    });
    expect(res.body.source_transaction.other_party_account).toBe(settlement.accountNumber);
    expect(res.body.destination_transaction.other_party_account).toBe(account);
    expect(await balance(app, account)).toBe('10.0000');
    expect(await feeIncome(app, tenant.clientId)).toBe(feesBefore);
    expect(settlement.balance).toBe(settlementBefore);

    const fetched = await http(app)
      .get(`/api/v1/transactions/${res.body.source_transaction.transaction_id}`)
      .set('authorization', tenant.auth)
      .expect(200);
    expect(fetched.body).toEqual(res.body.source_transaction);
  });

  it('reversing a debit credits the wallet with amount + fee and shows the settlement side as the debit', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 500);
    const feesBefore = await feeIncome(app, tenant.clientId);
    const debit = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, pct, 100.002)).expect(201);
    expect(debit.body.transaction_fee).toBe('2.5001');
    expect(await balance(app, account)).toBe('397.4979');

    const res = await reverse(app, tenant, debit.body.transaction_id).expect(201);
    const settlement = await settlementKes();
    expect(res.body.source_transaction).toEqual(
      expect.objectContaining({
        account: settlement.accountNumber,
        transaction_type: 'DEBIT',
        transaction_source: 'INTERNAL_REVERAL_DEBIT',
        transaction_amount: '100.0020',
      }),
    );
    expect(res.body.destination_transaction).toEqual(
      expect.objectContaining({
        account,
        transaction_type: 'CREDIT',
        transaction_source: 'INTERNAL_REVERAL_CREDIT',
        previous_balance: '397.4979',
        current_balance: '500.0000',
      }),
    );
    expect(await balance(app, account)).toBe('500.0000');
    expect(await feeIncome(app, tenant.clientId)).toBe(feesBefore);
  });

  it.each(['source', 'destination'] as const)('reversing a transfer by its %s leg restores both wallets and the fee', async (leg) => {
    const from = await wallets.create();
    const to = await wallets.create();
    await fund(app, tenant, from, 300);
    await fund(app, tenant, to, 7);
    const feesBefore = await feeIncome(app, tenant.clientId);
    const tr = await transfer(app, tenant, transferBody(tenant, from, to, pct, 200)).expect(201);
    expect(await balances(app, [from, to])).toEqual(['95.0000', '207.0000']);
    const id = leg === 'source' ? tr.body.source_transaction.transaction_id : tr.body.destination_transaction.transaction_id;

    const res = await reverse(app, tenant, id).expect(201);
    // The wallet that received money is debited, the wallet that paid is credited.
    expect(res.body.source_transaction).toEqual(
      expect.objectContaining({
        account: to,
        transaction_type: 'DEBIT',
        transaction_source: 'INTERNAL_REVERAL_DEBIT',
        current_balance: '7.0000',
        other_party_account: from,
      }),
    );
    expect(res.body.destination_transaction).toEqual(
      expect.objectContaining({
        account: from,
        transaction_type: 'CREDIT',
        transaction_source: 'INTERNAL_REVERAL_CREDIT',
        current_balance: '300.0000',
        other_party_account: to,
      }),
    );
    expect(await balances(app, [from, to])).toEqual(['300.0000', '7.0000']);
    expect(await feeIncome(app, tenant.clientId)).toBe(feesBefore);

    // Either leg now reads as reversed.
    const otherLeg = leg === 'source' ? tr.body.destination_transaction.transaction_id : tr.body.source_transaction.transaction_id;
    const again = await reverse(app, tenant, otherLeg).expect(409);
    expect(again.body).toEqual({ status: 409, message: 'Transaction already reversed', code: 'HttpException' });
  });

  it('a second reversal → 409 "Transaction already reversed", nothing moves', async () => {
    const account = await wallets.create();
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 50)).expect(201);
    await fund(app, tenant, account, 100);
    await reverse(app, tenant, credit.body.transaction_id).expect(201);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const res = await reverse(app, tenant, credit.body.transaction_id).expect(409);
    expect(res.body).toEqual({ status: 409, message: 'Transaction already reversed', code: 'HttpException' });
    expect(await balance(app, account)).toBe('100.0000');
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
  });

  it('two reversals of one transaction sent in parallel: exactly one succeeds, the other is 409', async () => {
    for (let round = 0; round < 3; round++) {
      const account = await wallets.create();
      await fund(app, tenant, account, 1000);
      const debit = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, pct, 400)).expect(201);
      const results = await Promise.all([reverse(app, tenant, debit.body.transaction_id), reverse(app, tenant, debit.body.transaction_id)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(results.find((r) => r.status === 409)!.body.message).toBe('Transaction already reversed');
      expect(await balance(app, account)).toBe('1000.0000');
    }
  });

  it('parallel reversals of a credit whose money is the whole balance: one succeeds, the others are 409 (not "insufficient")', async () => {
    for (let round = 0; round < 3; round++) {
      const account = await wallets.create();
      const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 80)).expect(201);
      const results = await Promise.all(Array.from({ length: 4 }, () => reverse(app, tenant, credit.body.transaction_id)));
      expect(results.map((r) => `${r.status} ${r.status === 201 ? '' : r.body.message}`).sort()).toEqual([
        '201 ',
        '409 Transaction already reversed',
        '409 Transaction already reversed',
        '409 Transaction already reversed',
      ]);
      expect(await balance(app, account)).toBe('0.0000');
    }
  });

  it('reversing a reversal → 400', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 100);
    const debit = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 40)).expect(201);
    const reversal = await reverse(app, tenant, debit.body.transaction_id).expect(201);
    for (const leg of [reversal.body.source_transaction, reversal.body.destination_transaction]) {
      const res = await reverse(app, tenant, leg.transaction_id).expect(400);
      expect(res.body.code).toBe('HttpException');
    }
    expect(await balance(app, account)).toBe('100.0000');
  });

  it('a reversal that would take a wallet below its floor → 400, nothing moves', async () => {
    const account = await wallets.create({ minimum_balance: 10 });
    await fund(app, tenant, account, 10);
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 100)).expect(201);
    await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 60)).expect(201);
    const res = await reverse(app, tenant, credit.body.transaction_id).expect(400);
    expect(res.body.code).toBe('HttpException');
    expect(await balance(app, account)).toBe('50.0000');
    // Once the money is back, the reversal goes through (the failed attempt did not mark it reversed).
    await fund(app, tenant, account, 60);
    await reverse(app, tenant, credit.body.transaction_id).expect(201);
    expect(await balance(app, account)).toBe('10.0000');
  });

  it('a transfer reversal after the destination spent the money → 400', async () => {
    const from = await wallets.create();
    const to = await wallets.create();
    await fund(app, tenant, from, 100);
    const tr = await transfer(app, tenant, transferBody(tenant, from, to, noFee, 100)).expect(201);
    await post(app, tenant, 'DEBIT', moneyBody(tenant, to, noFee, 1)).expect(201);
    await reverse(app, tenant, tr.body.source_transaction.transaction_id).expect(400);
    expect(await balances(app, [from, to])).toEqual(['0.0000', '99.0000']);
  });

  it("an unknown id, a malformed id and another client's transaction → 404 alike", async () => {
    const theirs = await (await walletSet(app, other)).create();
    const theirService = await createService(app, other);
    const credit = await post(app, other, 'CREDIT', moneyBody(other, theirs, theirService, 30)).expect(201);
    const foreign = await reverse(app, tenant, credit.body.transaction_id).expect(404);
    const unknown = await reverse(app, tenant, '00000000-0000-4000-8000-000000000000').expect(404);
    await reverse(app, tenant, 'not-a-transaction').expect(404);
    expect(foreign.body).toEqual(unknown.body);
    expect(await balance(app, theirs)).toBe('30.0000');
    await http(app).get(`/api/v1/transactions/${credit.body.transaction_id}`).set('authorization', tenant.auth).expect(404);
  });

  it('the command must be REVERSE', async () => {
    const account = await wallets.create();
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 30)).expect(201);
    await http(app).post(`/api/v1/transactions/${credit.body.transaction_id}?command=CANCEL`).set('authorization', tenant.auth).expect(400);
    await http(app).post(`/api/v1/transactions/${credit.body.transaction_id}`).set('authorization', tenant.auth).expect(400);
    expect(await balance(app, account)).toBe('30.0000');
  });

  it('a reversal with a source_transaction_id is idempotent: the replay returns the same reversal', async () => {
    const account = await wallets.create();
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 30)).expect(201);
    const key = ref('rev');
    const first = await reverse(app, tenant, credit.body.transaction_id, { source_transaction_id: key }).expect(201);
    expect(first.body.source_transaction.source_transaction_id).toBe(key);
    const replay = await reverse(app, tenant, credit.body.transaction_id, { source_transaction_id: key });
    expect([200, 201]).toContain(replay.status);
    expect(replay.body).toEqual(first.body);
    expect(await balance(app, account)).toBe('0.0000');
  });

  it('leaves the ledger consistent', async () => {
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
