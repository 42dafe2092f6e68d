import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Money } from '../../src/common/money';
import { FxService } from '../../src/fx/fx.service';
import { dataSource, TestTenant } from '../support/test-app';
import {
  balance,
  createService,
  d,
  feeIncome,
  fmt,
  fund,
  ledgerViolations,
  moneyBody,
  moneyFootprint,
  moneyTestBed,
  percentageFee,
  post,
  reverse,
  systemAccount,
  WalletSet,
} from '../support/money-fixtures';

/**
 * Currency conversion on credits and debits (provider contract §4, §10): rates[USD] for base KES is KES per USD;
 * money arriving in a KES wallet from USD is bought at `buying`, money leaving it is sold at `selling`, and the
 * record shows wallet amount = original_amount × exchange_rate.
 */
describe('FX conversion on credit and debit', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let pct: string;
  let bounded: string;

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
    // The sandbox quotes (src/fx/sandbox-rates.ts), so a concurrent seed writing the same rates changes nothing.
    await app.get(FxService).setRate('KES', 'USD', new Money('128.5'), new Money('130.5'), 'test');
    pct = await createService(app, tenant, percentageFee(2.5));
    bounded = await createService(app, tenant, { minimum_transaction_amount: 1000, maximum_transaction_amount: 2000 });
  });
  afterAll(async () => app.close());

  function expectMultiplier(record: { transaction_amount: string; original_amount: string; exchange_rate: string }) {
    expect(fmt(d(record.exchange_rate).times(record.original_amount))).toBe(record.transaction_amount);
  }

  it('a USD credit into a KES wallet converts at the buying rate and shows the original amount', async () => {
    const account = await wallets.create();
    const usdSettlementBefore = (await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'USD'))?.balance ?? '0.0000';
    const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 10.1234, { currency: 'USD' })).expect(201);
    expect(res.body).toEqual(
      expect.objectContaining({
        account,
        currency: 'KES',
        transaction_amount: '1300.8569',
        transaction_fee: '0.0000',
        current_balance: '1300.8569',
        original_currency: 'USD',
        original_amount: '10.1234',
      }),
    );
    expect(d(res.body.exchange_rate).equals(128.5)).toBe(true);
    expectMultiplier(res.body);
    expect(await balance(app, account)).toBe('1300.8569');
    // The USD came in from outside: the client's USD settlement account paid it.
    const usdSettlement = await systemAccount(app, tenant.clientId, 'SETTLEMENT', 'USD');
    expect(usdSettlement!.balance).toBe(fmt(d(usdSettlementBefore).minus('10.1234')));
  });

  it('a USD debit from a KES wallet converts at the selling rate', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 1000);
    const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 5, { currency: 'USD' })).expect(201);
    expect(res.body).toEqual(
      expect.objectContaining({
        currency: 'KES',
        transaction_amount: '652.5000',
        current_balance: '347.5000',
        original_currency: 'USD',
        original_amount: '5.0000',
      }),
    );
    expect(d(res.body.exchange_rate).equals(130.5)).toBe(true);
    expectMultiplier(res.body);
    expect(await balance(app, account)).toBe('347.5000');
  });

  it('the fee is priced on the converted amount, in the wallet currency', async () => {
    const account = await wallets.create();
    const feeBefore = await feeIncome(app, tenant.clientId, 'KES');
    const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, pct, 10, { currency: 'USD' })).expect(201);
    // 10 USD × 128.5 = 1285 KES; 2.5 % of 1285 = 32.125
    expect(res.body.transaction_amount).toBe('1285.0000');
    expect(res.body.transaction_fee).toBe('32.1250');
    expect(await balance(app, account)).toBe('1252.8750');
    expect(await feeIncome(app, tenant.clientId, 'KES')).toBe(fmt(d(feeBefore).plus('32.125')));
  });

  it('service bounds apply to the amount in the wallet currency', async () => {
    const account = await wallets.create();
    await fund(app, tenant, account, 5000);
    // 7 USD = 899.5 KES, below 1000; 16 USD = 2056 KES, above 2000; 8 USD = 1028 KES, inside.
    await post(app, tenant, 'CREDIT', moneyBody(tenant, account, bounded, 7, { currency: 'USD' })).expect(400);
    await post(app, tenant, 'CREDIT', moneyBody(tenant, account, bounded, 16, { currency: 'USD' })).expect(400);
    await post(app, tenant, 'DEBIT', moneyBody(tenant, account, bounded, 1500, { currency: 'USD' })).expect(400);
    expect(await balance(app, account)).toBe('5000.0000');
    await post(app, tenant, 'CREDIT', moneyBody(tenant, account, bounded, 8, { currency: 'USD' })).expect(201);
    expect(await balance(app, account)).toBe('6028.0000');
  });

  it('a KES credit into a USD wallet uses the inverse quote, and the record multiplier still holds', async () => {
    const account = await wallets.create({ currency: 'USD' });
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, 1305, { currency: 'KES' })).expect(201);
    // Selling KES-for-USD: 1305 KES at 130.5 KES per USD = 10 USD (rate rounded to 8 places).
    expect(credit.body).toEqual(
      expect.objectContaining({ currency: 'USD', original_currency: 'KES', original_amount: '1305.0000', transaction_amount: '10.0000' }),
    );
    expectMultiplier(credit.body);
    const debit = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, 257, { currency: 'KES' })).expect(201);
    // 257 KES at 128.5 KES per USD = 2 USD.
    expect(debit.body.transaction_amount).toBe('2.0000');
    expectMultiplier(debit.body);
    expect(await balance(app, account)).toBe('8.0000');
  });

  it('a currency with no rate → 400 and nothing moves', async () => {
    await dataSource(app).query(`DELETE FROM fx_rates WHERE (base_currency, currency) IN (('KES', 'SOS'), ('SOS', 'KES'))`);
    const account = await wallets.create();
    await fund(app, tenant, account, 1000);
    const before = await moneyFootprint(app, tenant.clientId);
    for (const command of ['CREDIT', 'DEBIT'] as const) {
      const res = await post(app, tenant, command, moneyBody(tenant, account, noFee, 10, { currency: 'SOS' })).expect(400);
      expect(res.body).toEqual({ status: 400, message: expect.stringMatching(/rate/i), code: 'HttpException' });
    }
    expect(await balance(app, account)).toBe('1000.0000');
    expect(await moneyFootprint(app, tenant.clientId)).toEqual(before);
  });

  it('a converted credit balances per currency and reverses exactly', async () => {
    const account = await wallets.create();
    const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, pct, 3.3333, { currency: 'USD' })).expect(201);
    expect(await balance(app, account)).toBe(credit.body.current_balance);
    await reverse(app, tenant, credit.body.transaction_id).expect(201);
    expect(await balance(app, account)).toBe('0.0000');
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
