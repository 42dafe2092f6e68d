import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestTenant } from '../support/test-app';
import {
  balance,
  balances,
  fund,
  http,
  ledgerViolations,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  post,
  ref,
  reverse,
  transfer,
  transferBody,
  WalletSet,
} from '../support/money-fixtures';

/** Reversals keyed by source_transaction_id (replays, concurrent duplicates, reused references), and a closed wallet. */
describe('reversal replays', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
  });
  afterAll(async () => app.close());

  it('a replay of a transfer reversal answers the same records, byte for byte, and moves nothing', async () => {
    const [from, to] = [await wallets.create(), await wallets.create()];
    await fund(app, tenant, from, 100);
    const tr = await transfer(app, tenant, transferBody(tenant, from, to, noFee, 40)).expect(201);
    const body = { source_transaction_id: ref('rev'), transaction_narration: 'Sent by mistake' };
    const first = await reverse(app, tenant, tr.body.destination_transaction.transaction_id, body).expect(201);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const replay = await reverse(app, tenant, tr.body.destination_transaction.transaction_id, body).expect(201);
    expect(replay.text).toBe(first.text);
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
    expect(await balances(app, [from, to])).toEqual(['100.0000', '0.0000']);
  });

  it('10 identical reversals at once: every answer is the one reversal, the money moves back once', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 100);
    const debit = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 100)).expect(201);
    const body = { source_transaction_id: ref('rev') };
    const answers = await Promise.all(Array.from({ length: 10 }, () => reverse(app, tenant, debit.body.transaction_id, body)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    for (const answer of answers) expect(answer.body).toEqual(answers[0].body);
    expect(await balance(app, account)).toBe('100.0000');
  });

  it('the same reference for a reversal of another transaction, or with another narration → 409, nothing moves', async () => {
    const account = await wallets.create();
    const credits = [
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10)).expect(201),
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 20)).expect(201),
    ];
    const key = ref('rev');
    await reverse(app, tenant, credits[0].body.transaction_id, { source_transaction_id: key }).expect(201);
    const footprint = await moneyFootprint(app, tenant.clientId);
    for (const [id, narration] of [
      [credits[1].body.transaction_id, undefined],
      [credits[0].body.transaction_id, 'Another narration'],
    ]) {
      const res = await reverse(app, tenant, id, { source_transaction_id: key, transaction_narration: narration }).expect(409);
      expect(res.body).toEqual({
        status: 409,
        message: 'source_transaction_id was already used for a different request',
        code: 'HttpException',
      });
    }
    // A credit's reference is taken for reversals too (one namespace).
    await reverse(app, tenant, credits[1].body.transaction_id, { source_transaction_id: credits[0].body.source_transaction_id }).expect(
      409,
    );
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
    expect(await balance(app, account)).toBe('20.0000');
  });

  it('a reversal refused for a floor leaves its reference free: once the money is back, it goes through', async () => {
    const account = await wallets.create();
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 50)).expect(201);
    await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 30)).expect(201);
    const body = { source_transaction_id: ref('rev') };
    const refused = await reverse(app, tenant, credit.body.transaction_id, body).expect(400);
    expect(refused.body).toEqual({ status: 400, message: `Insufficient balance in wallet ${account}`, code: 'HttpException' });
    await fund(app, tenant, account, 30);
    await reverse(app, tenant, credit.body.transaction_id, body).expect(201);
    expect(await balance(app, account)).toBe('0.0000');
  });

  it('a reversal that would move money on a CLOSED wallet → 400 naming it, nothing moves, its reference stays free', async () => {
    const [account, other] = [await wallets.create(), await wallets.create()];
    await fund(app, tenant, account, 25);
    const tr = await transfer(app, tenant, transferBody(tenant, account, other, noFee, 25)).expect(201);
    await http(app).post(`/api/v1/accounts/account-number/${account}?command=CLOSE`).set('authorization', tenant.auth).expect(200);
    const footprint = await moneyFootprint(app, tenant.clientId);
    const body = { source_transaction_id: ref('rev') };
    const res = await reverse(app, tenant, tr.body.source_transaction.transaction_id, body).expect(400);
    expect(res.body).toEqual({ status: 400, message: `Wallet ${account} is CLOSED and cannot be reversed on`, code: 'HttpException' });
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
    expect(await balances(app, [account, other])).toEqual(['0.0000', '25.0000']);
    await post(app, tenant, 'CREDIT', moneyBody(tenant, other, noFee, 1, { source_transaction_id: body.source_transaction_id })).expect(
      201,
    );
  });

  it('leaves the ledger consistent', async () => {
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
