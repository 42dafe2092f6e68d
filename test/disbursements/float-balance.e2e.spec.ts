import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import {
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  startIsolatedSandbox,
  stopClaiming,
  systemBalance,
} from '../support/gateway-fixtures';
import {
  createPayoutMerchant,
  dec,
  expectedFloat,
  expectPayoutAnswer,
  floatBalance,
  minus,
  mobilePayoutBody,
  PAYOUT_PATHS,
  plus,
  SandboxRow,
  statusPath,
  waitForPayoutStatus,
  waitForRailAnswer,
} from '../support/disbursement-fixtures';
import { createWallet } from '../support/wallet-fixtures';

const SETTLE_DELAY_MS = 300;
const FOUR_DECIMALS = /^-?\d+\.\d{4}$/;

/**
 * The float balance (disbursement document §2 "Float balance response", §4; issue 9 "Build" 1–2): the merchant's
 * settlement wallet read as the float, `balance` the available money, `reserved_balance` the money held for payouts
 * in flight, `ledger_balance` their sum; every figure exact to the fourth decimal across reserve, settle and return.
 */
describe('float balance: available, reserved and ledger balance', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS), CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    app = sandbox.app;
  });
  afterAll(async () => sandbox?.close());

  async function payout(merchant: GatewayMerchant, row: SandboxRow, amount: string) {
    const body = mobilePayoutBody(merchant, row, { sender_amount: amount, recipient_amount: amount });
    const res = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body);
    expectPayoutAnswer(res, 720, body.payout_reference as string);
    return body.payout_reference as string;
  }

  it('a funded float reads {balance, currency, status, ledger_balance, reserved_balance} as 4-decimal strings', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const balance = await floatBalance(app, merchant);
    expect(balance).toEqual({
      balance: '1000.0000',
      currency: 'KES',
      status: 'ACTIVE',
      ledger_balance: '1000.0000',
      reserved_balance: '0.0000',
    });
    for (const key of ['balance', 'ledger_balance', 'reserved_balance'] as const) expect(balance[key]).toMatch(FOUR_DECIMALS);
  });

  it('reserve at acceptance, settle on 700, return on 701, keep on 703/704: exact to the fourth decimal', async () => {
    const merchant = await createPayoutMerchant(app, { float: '5000' });
    const feeIncome = () => systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const feeBefore = await feeIncome();

    // The worker stops claiming while each payout's reservation is read, so no settlement can come first.
    let startClaiming = await stopClaiming(app);
    // 123.4567 + the FIXED fee 10 is reserved at once: available drops, reserved rises, the ledger balance is unchanged.
    const a = await payout(merchant, 'ok', '123.4567');
    expect(await floatBalance(app, merchant)).toEqual({
      balance: '4866.5433',
      currency: 'KES',
      status: 'ACTIVE',
      ledger_balance: '5000.0000',
      reserved_balance: '133.4567',
    });
    // The wallet's stored balance is the available balance (the hold has left it for the in-flight account).
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe('4866.5433');
    startClaiming();

    // Success (700) moves the hold out of the float: reserved drops, available stays, the fee becomes income.
    await waitForPayoutStatus(app, merchant, a, 700);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('4866.5433', 0));
    expect(await feeIncome()).toBe(plus(feeBefore, 10));

    // Failure (701) returns amount + fee to the available balance; no fee is earned.
    startClaiming = await stopClaiming(app);
    const b = await payout(merchant, 'failed', '1.0001');
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('4855.5432', '11.0001'));
    startClaiming();
    await waitForPayoutStatus(app, merchant, b, 701);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('4866.5433', 0));
    expect(await feeIncome()).toBe(plus(feeBefore, 10));

    // Pending (703) and jammed (704) keep amount + fee reserved and visible.
    const c = await payout(merchant, 'pending', '999.9999');
    const d = await payout(merchant, 'jammed', '42.0042');
    await waitForPayoutStatus(app, merchant, d, 704);
    await waitForRailAnswer(app, merchant, c);
    expect((await gateway(app, merchant.token).get(statusPath(c)).expect(200)).body.data.payment_status).toBe(703);
    const reserved = plus('999.9999', 10, '42.0042', 10);
    expect(reserved).toBe('1062.0041');
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(minus('4866.5433', reserved), reserved));
    expect(await floatBalance(app, merchant)).toEqual({
      balance: '3804.5392',
      currency: 'KES',
      status: 'ACTIVE',
      ledger_balance: '4866.5433',
      reserved_balance: '1062.0041',
    });
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe('3804.5392');
    expect(await feeIncome()).toBe(plus(feeBefore, 10));
  });

  it('a PERCENTAGE fee is rounded half-up to 4 decimals and reserved with the amount (transaction_cost)', async () => {
    const merchant = await createPayoutMerchant(app, {
      float: '1000',
      serviceOverrides: { transaction_fee_type: 'PERCENTAGE', transaction_fee: 2.5 },
    });
    // 2.5 % of 101.002 = 2.52505 → 2.5251 half-up (half-even would give 2.5250); of 123.4567 = 3.0864175 → 3.0864.
    const first = await payout(merchant, 'pending', '101.002');
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('896.4729', '103.5271'));
    const second = await payout(merchant, 'pending', '123.4567');
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('769.9298', '230.0702'));
    await Promise.all([first, second].map((reference) => waitForRailAnswer(app, merchant, reference)));
    const status = (ref: string) => gateway(app, merchant.token).get(statusPath(ref)).expect(200);
    expect((await status(first)).body.data).toMatchObject({ transaction_cost: '2.5251', amount: '101.0020', payment_status: 703 });
    expect((await status(second)).body.data).toMatchObject({ transaction_cost: '3.0864', amount: '123.4567', payment_status: 703 });
  });

  it('several payouts accepted back to back reserve exactly their sum', async () => {
    const merchant = await createPayoutMerchant(app, { float: '10000' });
    const amounts = ['1.0001', '2.9999', '333.3333', '4444.4444', '17.0070'];
    for (const amount of amounts) await payout(merchant, 'pending', amount);
    const reserved = plus(...amounts, ...amounts.map(() => 10));
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(minus('10000', reserved), reserved));
    expect(reserved).toBe(dec('4848.7847'));
  });

  describe('only the caller’s floats are visible', () => {
    let merchant: GatewayMerchant;
    let other: GatewayMerchant;

    beforeAll(async () => {
      merchant = await createPayoutMerchant(app, { float: '100' });
      other = await createPayoutMerchant(app, { float: '100' });
    });

    const balanceOf = (token: string, account: string) => gateway(app, token).get(`/v1/accounts/${account}/balance`);

    it('another client’s float → 404, exactly as an unknown account; the other client still reads its own', async () => {
      const foreign = await balanceOf(merchant.token, other.settlementAccountNumber);
      const unknown = await balanceOf(merchant.token, '19999999999');
      expect(foreign.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(JSON.stringify(foreign.body)).not.toContain('100.0000');
      expect(JSON.stringify(foreign.body).replaceAll(other.settlementAccountNumber, 'N')).toBe(
        JSON.stringify(unknown.body).replaceAll('19999999999', 'N'),
      );
      expect((await floatBalance(app, other)).balance).toBe('100.0000');
    });

    it('a wallet of the caller that is no service’s float → 404', async () => {
      const wallet = await createWallet(app, merchant.tenant, { account_name: 'Not a float' });
      const res = await balanceOf(merchant.token, wallet.account_number);
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toMatch(/\d+\.\d{4}/);
    });

    it('without a token → 401; with a wallet-service (not gateway) token → 401', async () => {
      const path = `/v1/accounts/${merchant.settlementAccountNumber}/balance`;
      expect((await request(app.getHttpServer()).get(path)).status).toBe(401);
      expect((await balanceOf(merchant.tenant.token, merchant.settlementAccountNumber)).status).toBe(401);
    });

    it('the token may also come as Authorization: Bearer', async () => {
      const res = await request(app.getHttpServer())
        .get(`/v1/accounts/${merchant.settlementAccountNumber}/balance`)
        .set('authorization', `Bearer ${merchant.token}`);
      expect(res.status).toBe(200);
      expect(res.body.balance).toBe('100.0000');
    });
  });
});
