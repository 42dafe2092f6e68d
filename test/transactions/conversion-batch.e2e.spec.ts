import { BadRequestException } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { WalletPrincipal } from '../../src/auth/principal';
import { Money } from '../../src/common/money';
import { FxService } from '../../src/fx/fx.service';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import {
  balance,
  balances,
  createService,
  fixedFee,
  fmt,
  fund,
  ledgerViolations,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  percentageFee,
  post,
  systemAccount,
  transfer,
  transferBody,
  WalletSet,
} from '../support/money-fixtures';
import { dataSource, TestTenant } from '../support/test-app';

type Answer = { [field: string]: unknown };

/**
 * Conversions travel in the groups of wallet_money_batch with every other wallet request (issue 10): a request in
 * another currency than its wallet's is converted, bounded, priced, posted through the FX position accounts and
 * recorded inside the group's one call. Expected amounts are worked out here from the quotes the test sets: a quote of
 * base = wallet currency is used as it is (buying into the wallet, selling out of it), otherwise 1 / the other base's
 * quote (selling into the wallet, buying out of it) rounded half up to 8 decimals; wallet amount = amount × rate,
 * rounded half up to 4.
 */
describe('conversions in groups', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let principal: WalletPrincipal;
  let movements: MoneyMovementsService;

  // Currencies no other test quotes: RWF wallets, ZMW quoted by base RWF, RWF quoted by base AED, XOF stale.
  const ZMW_IN_RWF = { buying: '52.12345678', selling: '53.87654321' };
  const RWF_IN_AED = { buying: '0.00270001', selling: '0.00280003' };
  const XOF_UPDATED_AT = '2021-06-07 08:09:10.111999+00';

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
    principal = { userId: tenant.username, clientId: tenant.clientId, clientCode: tenant.clientCode };
    movements = app.get(MoneyMovementsService);
    const fx = app.get(FxService);
    await fx.setRate('RWF', 'ZMW', new Money(ZMW_IN_RWF.buying), new Money(ZMW_IN_RWF.selling), 'test');
    await fx.setRate('AED', 'RWF', new Money(RWF_IN_AED.buying), new Money(RWF_IN_AED.selling), 'test');
    await fx.setRate('RWF', 'XOF', new Money('0.21'), new Money('0.22'), 'test');
    await dataSource(app).query(`UPDATE fx_rates SET updated_at = $1 WHERE base_currency = 'RWF' AND currency = 'XOF'`, [XOF_UPDATED_AT]);
  });
  afterAll(async () => app.close());

  const rwfWallet = () => wallets.create({ currency: 'RWF' });
  const round4 = (value: Decimal) => value.toDecimalPlaces(4, Decimal.ROUND_HALF_UP);

  /** The entry's postings in order, each account named by its wallet number or its system kind and currency. */
  async function postingsOf(reference: string): Promise<Array<[string, string]>> {
    const rows = await dataSource(app).query(
      `SELECT CASE a.kind WHEN 'WALLET' THEN a.account_number ELSE a.kind || ' ' || a.currency END AS account, p.amount
       FROM wallet_operations o JOIN postings p ON p.client_id = o.client_id AND p.entry_id = o.entry_id
       JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
       WHERE o.client_id = $1 AND o.source_transaction_id = $2 ORDER BY p.id`,
      [tenant.clientId, reference],
    );
    return rows.map((r: { account: string; amount: string }) => [r.account, fmt(r.amount)]);
  }

  it('a converted credit, a converted transfer, refusals and a plain transfer in one group are each answered as if alone', async () => {
    const [payer, payee, target, empty] = [await rwfWallet(), await rwfWallet(), await rwfWallet(), await rwfWallet()];
    await fund(app, tenant, payer, 10_000);
    const pct = await createService(app, tenant, percentageFee(1.5));
    const fixed = await createService(app, tenant, fixedFee(5));
    const credit = moneyBody(tenant, target, pct, '12.3456', { currency: 'ZMW' });
    const convertedTransfer = transferBody(tenant, payer, payee, fixed, '1.2345', { currency: 'AED', transaction_narration: 'fx' });
    const stale = moneyBody(tenant, target, noFee, '10', { currency: 'XOF' });
    const uncovered = moneyBody(tenant, empty, noFee, '1', { currency: 'ZMW' });
    const plain = transferBody(tenant, payer, payee, noFee, '100', { currency: 'RWF' });
    const feeIncomeBefore = (await systemAccount(app, tenant.clientId, 'FEE_INCOME', 'RWF'))?.balance ?? '0.0000';
    const footprint = await moneyFootprint(app, tenant.clientId);

    // Submitted in one turn of the event loop: they leave as one group.
    const [creditAnswer, transferAnswer, staleAnswer, uncoveredAnswer, plainAnswer] = await Promise.allSettled([
      movements.creditOrDebit(principal, 'CREDIT', credit),
      movements.transfer(principal, convertedTransfer),
      movements.creditOrDebit(principal, 'CREDIT', stale),
      movements.creditOrDebit(principal, 'DEBIT', uncovered),
      movements.transfer(principal, plain),
    ]);

    // The credit: ZMW bought at RWF's buying quote, 1.5 % fee on the RWF amount.
    const creditAmount = round4(new Money('12.3456').times(ZMW_IN_RWF.buying));
    const creditFee = round4(creditAmount.times('0.015'));
    const settlementZmw = (await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'ZMW'))!;
    expect(creditAnswer).toEqual({
      status: 'fulfilled',
      value: expect.objectContaining({
        account: target,
        currency: 'RWF',
        transaction_type: 'CREDIT',
        transaction_source: 'EXTERNAL_CREDIT',
        transaction_amount: fmt(creditAmount),
        transaction_fee: fmt(creditFee),
        previous_balance: '0.0000',
        current_balance: fmt(creditAmount.minus(creditFee)),
        other_party_account: settlementZmw.accountNumber,
        original_currency: 'ZMW',
        original_amount: '12.3456',
        exchange_rate: ZMW_IN_RWF.buying,
      }),
    });
    expect(await postingsOf(credit.source_transaction_id)).toEqual([
      ['SETTLEMENT ZMW', '-12.3456'],
      [target, fmt(creditAmount.minus(creditFee))],
      ['FEE_INCOME RWF', fmt(creditFee)],
      ['FX_POSITION ZMW', '12.3456'],
      ['FX_POSITION RWF', fmt(creditAmount.negated())],
    ]);

    // The transfer: AED leaving an RWF wallet, at the inverse of AED's buying quote of RWF; only the amount converts.
    const transferRate = new Money(1).dividedBy(RWF_IN_AED.buying).toDecimalPlaces(8, Decimal.ROUND_HALF_UP);
    const transferAmount = round4(new Money('1.2345').times(transferRate));
    const conversion = { original_currency: 'AED', original_amount: '1.2345', exchange_rate: transferRate.toFixed(8) };
    expect(transferAnswer.status).toBe('fulfilled');
    const pair = (transferAnswer as PromiseFulfilledResult<{ source_transaction: Answer; destination_transaction: Answer }>).value;
    expect(pair.source_transaction).toEqual(
      expect.objectContaining({
        account: payer,
        currency: 'RWF',
        transaction_amount: fmt(transferAmount),
        transaction_fee: '5.0000',
        previous_balance: '10000.0000',
        other_party_account: payee,
        transaction_narration: 'fx',
        ...conversion,
      }),
    );
    expect(pair.destination_transaction).toEqual(
      expect.objectContaining({
        account: payee,
        currency: 'RWF',
        transaction_amount: fmt(transferAmount),
        transaction_fee: '0.0000',
        current_balance: fmt(transferAmount),
        other_party_account: payer,
        ...conversion,
      }),
    );
    expect(await postingsOf(convertedTransfer.source_transaction_id)).toEqual([
      [payer, fmt(transferAmount.plus(5).negated())],
      [payee, fmt(transferAmount)],
      ['FEE_INCOME RWF', '5.0000'],
    ]);

    // The refusals, in the documented words: the stale quote's time as the database holds it, to the millisecond.
    expect(staleAnswer).toEqual({ status: 'rejected', reason: expect.any(BadRequestException) });
    expect((staleAnswer as PromiseRejectedResult).reason.message).toBe(
      'The XOF/RWF exchange rate is stale: last updated 2021-06-07T08:09:10.111Z, and conversions use rates at most 2 h old',
    );
    expect(uncoveredAnswer).toEqual({ status: 'rejected', reason: expect.any(BadRequestException) });
    expect((uncoveredAnswer as PromiseRejectedResult).reason.message).toBe(`Insufficient balance in wallet ${empty}`);

    // The plain transfer, after the converted one in the group's order.
    expect(plainAnswer.status).toBe('fulfilled');
    const plainPair = (plainAnswer as PromiseFulfilledResult<{ source_transaction: Answer }>).value;
    expect(plainPair.source_transaction).toEqual(
      expect.objectContaining({
        transaction_amount: '100.0000',
        previous_balance: fmt(new Money(10_000).minus(transferAmount).minus(5)),
        original_currency: null,
        original_amount: null,
        exchange_rate: null,
      }),
    );

    expect(await balances(app, [payer, payee, target, empty])).toEqual([
      fmt(new Money(10_000).minus(transferAmount).minus(5).minus(100)),
      fmt(transferAmount.plus(100)),
      fmt(creditAmount.minus(creditFee)),
      '0.0000',
    ]);
    expect(await systemAccount(app, tenant.clientId, 'FEE_INCOME', 'RWF')).toEqual(
      expect.objectContaining({ balance: fmt(new Money(feeIncomeBefore).plus(creditFee).plus(5)) }),
    );
    // Three entries and five records, all written by one transaction: the requests were one group.
    expect(await moneyFootprint(app, tenant.clientId)).toEqual({ entries: footprint.entries + 3, records: footprint.records + 5 });
    const operations = await dataSource(app).query(
      `SELECT DISTINCT xmin::text AS tx FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = ANY($2)`,
      [tenant.clientId, [credit.source_transaction_id, convertedTransfer.source_transaction_id, plain.source_transaction_id]],
    );
    expect(operations).toHaveLength(1);

    // What was recorded is what was answered: a replay reads it back.
    expect((await post(app, tenant, 'CREDIT', credit).expect(201)).body).toEqual(creditAnswer.status === 'fulfilled' && creditAnswer.value);
    expect((await transfer(app, tenant, convertedTransfer).expect(201)).body).toEqual(pair);
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('concurrent duplicates of one converted credit move the money once and get one answer', async () => {
    const target = await rwfWallet();
    const body = moneyBody(tenant, target, noFee, '3.3333', { currency: 'ZMW' });
    const settlementBefore = (await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'ZMW'))?.balance ?? '0.0000';
    // Copies in one group, over HTTP in the groups that follow, and directly in later turns of the event loop.
    const copies = await Promise.all([
      ...Array.from({ length: 4 }, () => movements.creditOrDebit(principal, 'CREDIT', body)),
      ...Array.from({ length: 12 }, async () => (await post(app, tenant, 'CREDIT', body).expect(201)).body),
      ...Array.from({ length: 4 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 3));
        return movements.creditOrDebit(principal, 'CREDIT', body);
      }),
    ]);

    const amount = round4(new Money('3.3333').times(ZMW_IN_RWF.buying));
    expect(new Set(copies.map((copy) => JSON.stringify(copy))).size).toBe(1);
    expect(copies[0]).toEqual(expect.objectContaining({ transaction_amount: fmt(amount), exchange_rate: ZMW_IN_RWF.buying }));
    expect(await balance(app, target)).toBe(fmt(amount));
    expect((await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'ZMW'))!.balance).toBe(
      fmt(new Money(settlementBefore).minus('3.3333')),
    );
    const [{ n }] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = $2`,
      [tenant.clientId, body.source_transaction_id],
    );
    expect(n).toBe(1);
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
