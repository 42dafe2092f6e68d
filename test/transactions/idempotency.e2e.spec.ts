import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createTenant, TestTenant } from '../support/test-app';
import {
  balance,
  balances,
  createService,
  feeIncome,
  fixedFee,
  fmt,
  fund,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  post,
  ref,
  transfer,
  transferBody,
  walletSet,
  WalletSet,
} from '../support/money-fixtures';

/** source_transaction_id is the idempotency key (provider contract §4, fixed). */
describe('idempotency of credits, debits and transfers', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let fixed5: string;

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
    fixed5 = await createService(app, tenant, fixedFee(5));
  });
  afterAll(async () => app.close());

  it('a replay with the same body returns the original record and moves nothing', async () => {
    const account = await wallets.create();
    const body = moneyBody(tenant, account, fixed5, 100, { transaction_narration: 'once', source_transaction_data: { a: 1 } });
    const first = await post(app, tenant, 'CREDIT', body).expect(201);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const fees = await feeIncome(app, tenant.clientId);
    const replay = await post(app, tenant, 'CREDIT', body);
    expect([200, 201]).toContain(replay.status);
    expect(replay.body).toEqual(first.body);
    expect(await balance(app, account)).toBe('95.0000');
    expect(await feeIncome(app, tenant.clientId)).toBe(fees);
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
  });

  it('the amount 100 and "100.00" are the same request', async () => {
    const account = await wallets.create();
    const body = moneyBody(tenant, account, noFee, 100);
    const first = await post(app, tenant, 'CREDIT', body).expect(201);
    const replay = await post(app, tenant, 'CREDIT', { ...body, transaction_amount: '100.00' });
    expect([200, 201]).toContain(replay.status);
    expect(replay.body.transaction_id).toBe(first.body.transaction_id);
    expect(await balance(app, account)).toBe('100.0000');
  });

  it('the same source_transaction_id with a different body → 409, nothing moves', async () => {
    const account = await wallets.create();
    const body = moneyBody(tenant, account, noFee, 100);
    await post(app, tenant, 'CREDIT', body).expect(201);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const changed = [
      { ...body, transaction_amount: 101 },
      { ...body, transaction_narration: 'different' },
    ];
    for (const other of changed) {
      const res = await post(app, tenant, 'CREDIT', other).expect(409);
      expect(res.body).toEqual({ status: 409, message: expect.any(String), code: 'HttpException' });
    }
    // The key is shared across credits, debits and transfers.
    await post(app, tenant, 'DEBIT', body).expect(409);
    const second = await wallets.create();
    await transfer(
      app,
      tenant,
      transferBody(tenant, account, second, noFee, 1, { source_transaction_id: body.source_transaction_id }),
    ).expect(409);
    expect(await balances(app, [account, second])).toEqual(['100.0000', '0.0000']);
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
  });

  it('the key is per client: another client may use the same source_transaction_id', async () => {
    const otherTenant = await createTenant(app);
    const otherWallet = await (await walletSet(app, otherTenant)).create();
    const otherService = await createService(app, otherTenant);
    const account = await wallets.create();
    const key = ref();
    const mine = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10, { source_transaction_id: key })).expect(201);
    const theirs = await post(
      app,
      otherTenant,
      'CREDIT',
      moneyBody(otherTenant, otherWallet, otherService, 20, { source_transaction_id: key }),
    ).expect(201);
    expect(theirs.body.transaction_id).not.toBe(mine.body.transaction_id);
    expect(await balances(app, [account, otherWallet])).toEqual(['10.0000', '20.0000']);
  });

  it('20 identical credits in parallel: all succeed with one transaction_id, the balance moves once', async () => {
    const account = await wallets.create();
    const body = moneyBody(tenant, account, fixed5, 250);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const results = await Promise.all(Array.from({ length: 20 }, () => post(app, tenant, 'CREDIT', body)));
    for (const r of results) expect([200, 201]).toContain(r.status);
    expect(new Set(results.map((r) => r.body.transaction_id)).size).toBe(1);
    for (const r of results) expect(r.body).toEqual(results[0].body);
    expect(await balance(app, account)).toBe('245.0000');
    const after = await moneyFootprint(app, tenant.clientId);
    expect(after.entries - footprint.entries).toBe(1);
    expect(after.records - footprint.records).toBe(1);
  });

  it('20 identical transfers in parallel: one pair of records, the money moves once', async () => {
    const from = await wallets.create();
    const to = await wallets.create();
    await fund(app, tenant, from, 100);
    const body = transferBody(tenant, from, to, fixed5, 60);
    const results = await Promise.all(Array.from({ length: 20 }, () => transfer(app, tenant, body)));
    for (const r of results) expect([200, 201]).toContain(r.status);
    expect(new Set(results.map((r) => r.body.source_transaction.transaction_id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.destination_transaction.transaction_id)).size).toBe(1);
    expect(await balances(app, [from, to])).toEqual(['35.0000', '60.0000']);
  });

  it('a replay of a debit that spent the whole balance returns the original, not "insufficient balance"', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 105);
    const body = moneyBody(tenant, account, fixed5, 100);
    const first = await post(app, tenant, 'DEBIT', body).expect(201);
    expect(first.body.current_balance).toBe('0.0000');
    const replay = await post(app, tenant, 'DEBIT', body);
    expect([200, 201]).toContain(replay.status);
    expect(replay.body).toEqual(first.body);
    expect(await balance(app, account)).toBe('0.0000');
  });

  it('parallel duplicates of a debit that spends the whole balance all get the original result', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 105);
    const body = moneyBody(tenant, account, fixed5, 100);
    const results = await Promise.all(Array.from({ length: 10 }, () => post(app, tenant, 'DEBIT', body)));
    for (const r of results) expect([200, 201]).toContain(r.status);
    expect(new Set(results.map((r) => r.body.transaction_id)).size).toBe(1);
    expect(await balance(app, account)).toBe('0.0000');
  });

  it('50 distinct debits in parallel against funds for exactly 10: 10 succeed, 40 get 400 "Insufficient balance…"', async () => {
    const account = await wallets.create({ minimum_balance: 20 });
    // Each debit costs 30 + 5 fee = 35; the wallet holds 20 (floor) + 10 × 35.
    await fund(app, tenant, account, 370);
    const results = await Promise.all(Array.from({ length: 50 }, () => post(app, tenant, 'DEBIT', moneyBody(tenant, account, fixed5, 30))));
    const ok = results.filter((r) => r.status === 201 || r.status === 200);
    const refused = results.filter((r) => r.status === 400);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused)
      expect(r.body).toEqual({ status: 400, message: expect.stringMatching(/^Insufficient balance/), code: 'HttpException' });
    expect(await balance(app, account)).toBe('20.0000');
    // Every success saw a distinct, consistent balance step.
    const steps = ok.map((r) => [r.body.previous_balance, r.body.current_balance]).sort((a, b) => Number(b[0]) - Number(a[0]));
    steps.forEach(([prev, cur], i) => {
      expect(prev).toBe(fmt(370 - 35 * i));
      expect(cur).toBe(fmt(370 - 35 * (i + 1)));
    });
  });
});
