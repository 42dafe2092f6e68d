import { BadRequestException, ConflictException } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WalletPrincipal } from '../../src/auth/principal';
import { Money } from '../../src/common/money';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import { balance, balances, fund, ledgerViolations, moneyTestBed, transfer, transferBody, WalletSet } from '../support/money-fixtures';
import { dataSource, TestTenant } from '../support/test-app';

/**
 * Group commit (issue 10): concurrent wallet requests of one process travel to the database together and are
 * carried out in one transaction, each on its own. These tests put refusals and acceptances in one group and many
 * groups on one hot wallet, and check every answer, every balance and the ledger invariants.
 */
describe('wallet money requests in groups', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let principal: WalletPrincipal;
  let movements: MoneyMovementsService;

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
    principal = { userId: tenant.username, clientId: tenant.clientId, clientCode: tenant.clientCode };
    movements = app.get(MoneyMovementsService);
  });
  afterAll(async () => app.close());

  it('insufficient funds, replays, a reused reference and valid transfers in one group are each answered on their own', async () => {
    const [rich, poor, payee] = [await wallets.create(), await wallets.create(), await wallets.create()];
    await fund(app, tenant, rich, 100);
    await fund(app, tenant, poor, 10);
    const earlier = transferBody(tenant, rich, payee, noFee, 5);
    const original = await transfer(app, tenant, earlier).expect(201);
    const twice = transferBody(tenant, rich, payee, noFee, 7);
    const valid = transferBody(tenant, rich, payee, noFee, 20);

    // Submitted in one turn of the event loop: they leave as one group.
    const answers = await Promise.allSettled([
      movements.transfer(principal, transferBody(tenant, poor, payee, noFee, 50)),
      movements.transfer(principal, earlier),
      movements.transfer(principal, { ...earlier, transaction_amount: 6 }),
      movements.transfer(principal, twice),
      movements.transfer(principal, twice),
      movements.transfer(principal, valid),
    ]);
    const [insufficient, replay, reused, first, second, accepted] = answers;

    expect(insufficient).toEqual({ status: 'rejected', reason: expect.any(BadRequestException) });
    expect((insufficient as PromiseRejectedResult).reason.message).toBe(`Insufficient balance in wallet ${poor}`);
    expect(replay).toEqual({ status: 'fulfilled', value: original.body });
    expect(reused).toEqual({ status: 'rejected', reason: expect.any(ConflictException) });
    expect(first.status).toBe('fulfilled');
    expect(second).toEqual(first);
    expect(accepted.status).toBe('fulfilled');
    const done = (accepted as PromiseFulfilledResult<{ source_transaction: Record<string, string> }>).value.source_transaction;
    expect(done).toEqual(expect.objectContaining({ transaction_amount: '20.0000', source_transaction_id: valid.source_transaction_id }));

    // 100 - 5 - 7 - 20; the poor wallet untouched; each reference recorded once.
    expect(await balances(app, [rich, poor, payee])).toEqual(['68.0000', '10.0000', '32.0000']);
    const operations = await dataSource(app).query(
      `SELECT source_transaction_id, xmin::text AS tx FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = ANY($2)`,
      [tenant.clientId, [twice.source_transaction_id, valid.source_transaction_id]],
    );
    expect(operations).toHaveLength(2);
    // One transaction wrote both: they were one group.
    expect(operations[0].tx).toBe(operations[1].tx);
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('200 concurrent transfers through one hot wallet keep its floor, in every group', async () => {
    const hot = await wallets.create({ minimum_balance: 100 });
    const payees = await Promise.all([1, 2, 3, 4, 5].map(() => wallets.create()));
    await fund(app, tenant, hot, 1100);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => transfer(app, tenant, transferBody(tenant, hot, payees[i % 5], noFee, 7))),
    );
    const accepted = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    // 1,000 above the floor pays 142 transfers of 7; every other one is refused, and nothing else happens.
    expect(accepted).toHaveLength(142);
    expect(refused.every((r) => r.status === 400 && r.body.message === `Insufficient balance in wallet ${hot}`)).toBe(true);
    expect(await balance(app, hot)).toBe('106.0000');
    const payeeTotal = (await balances(app, payees)).reduce((sum, b) => sum.plus(b), new Money(0));
    expect(payeeTotal.toFixed(4)).toBe('994.0000');
    // Each answer's running balance is one the wallet really passed through, never below the floor.
    const after = accepted.map((r) => new Money(r.body.source_transaction.current_balance));
    expect(new Set(after.map((b) => b.toFixed(4))).size).toBe(142);
    expect(after.every((b) => b.gte(100))).toBe(true);
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
