import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  callbackLog,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ReceivedCallback,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import {
  b2bBody,
  b2bStatusPath,
  BasicCredentials,
  createPayoutMerchant,
  dec,
  expectedFloat,
  expectPayoutAnswer,
  expectSignedCallback,
  floatBalance,
  minus,
  PAYOUT_FEE,
  PAYOUT_PATHS,
  plus,
  SANDBOX,
  SANDBOX_STATUS,
  SandboxRow,
  setPayoutsCallback,
  storedCounts,
  waitForPayoutStatus,
  waitForRailAnswer,
} from '../support/disbursement-fixtures';

const SETTLE_DELAY_MS = 300;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const FOUR_DECIMALS = /^-?\d+\.\d{4}$/;
const ROWS: SandboxRow[] = ['ok', 'otp', 'authorize', 'failed', 'pending', 'jammed'];

/**
 * B2B payouts end to end in the sandbox (disbursement document §2 "B2B payout request", §3 B2B codes, §6, §7;
 * provider contract §5–§7): every sandbox row (decided by recipient_account_number), the B2B result with
 * transaction_id / payment_reference / wallet_account / account_balance, recipient_type ↔ payment_method ↔
 * destination consistency, duplicates (722) and unknown references (723).
 */
describe('B2B payouts (sandbox rails)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS), CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createPayoutMerchant(app, { float: '100000' });
    basic = await setPayoutsCallback(app, merchant, receiver.url('/b2c-notifications'));
  });
  afterAll(async () => sandbox?.close());

  const gw = () => gateway(app, merchant.token);
  /** The client's payouts callback settings, on the receiver's origin, so callbacks there carry their Basic credentials. */
  let basic: BasicCredentials;

  async function receivedAt(url: string): Promise<ReceivedCallback[]> {
    return waitFor(`a callback at ${url}`, () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
  }

  function expectB2bResult(result: Record<string, any>, body: Record<string, unknown>, status: number, accountBalance: string) {
    expect(result).toEqual({
      payout_reference: body.payout_reference,
      transaction_id: expect.anything(),
      payment_reference: status === 700 ? expect.stringMatching(/\S/) : result.payment_reference === null ? null : expect.any(String),
      wallet_account: merchant.settlementAccountNumber,
      destination: body.recipient_type === 'BANK_ACCOUNT_NUMBER' ? 'bank_account' : expect.stringMatching(/\S/),
      payment_status: status,
      amount: dec(body.amount as string),
      currency: body.currency_code,
      account_number: body.recipient_account_number,
      destination_name: expect.stringMatching(/\S/),
      description: body.payment_description,
      transaction_time: expect.stringMatching(ISO),
      account_balance: accountBalance,
      result_description: expect.stringMatching(/\S/),
    });
    expect(String(result.transaction_id)).toMatch(/\S/);
    if (body.recipient_type !== 'BANK_ACCOUNT_NUMBER') expect(result.destination).not.toBe('bank_account');
  }

  describe.each([
    ['PAYBILL', 'MMONEY_B2B', '888880'],
    ['TILL', 'MMONEY_B2B', '512345'],
    ['BANK_ACCOUNT_NUMBER', 'BANK', '1234567890'],
  ])('recipient_type %s with payment_method %s', (recipientType, method) => {
    it.each(ROWS.map((row) => [row, SANDBOX_STATUS[row]]))('sandbox row %s → %d', async (row) => {
      const status = SANDBOX_STATUS[row as SandboxRow];
      const url = receiver.url();
      const body = b2bBody(merchant, {
        recipient_type: recipientType,
        payment_method: method,
        recipient_account_number: SANDBOX.account[row as SandboxRow],
        amount: '250.1234',
        callback_url: url,
      });
      const reference = body.payout_reference as string;
      const before = await floatBalance(app, merchant);
      const res = await gw().post(PAYOUT_PATHS.b2b).send(body);
      expectPayoutAnswer(res, 720, reference);
      expect(res.body).toEqual({ payout_reference: reference, response_code: 720, response_description: expect.any(String) });

      const held = plus('250.1234', PAYOUT_FEE);
      const availableAfter = status === 701 ? before.balance : minus(before.balance, held);
      const result = await waitForPayoutStatus(app, merchant, reference, status, { b2b: true });
      expectB2bResult(result, body, status, availableAfter);

      if (status === 700 || status === 701) {
        const [callback] = await receivedAt(url);
        expectSignedCallback(callback, merchant, basic);
        expectB2bResult(callback.body, body, status, availableAfter);
        expect(callback.body.transaction_id).toEqual(result.transaction_id);
        expect(await floatBalance(app, merchant)).toEqual(expectedFloat(availableAfter, before.reserved_balance));
      } else {
        // Once the rail's answer is applied, the payout stays where it is and nobody was told anything.
        await waitForRailAnswer(app, merchant, reference);
        expect((await gw().get(b2bStatusPath(reference)).expect(200)).body.payment_status).toBe(status);
        expect((await callbackLog(app, merchant, reference)).deliveries).toEqual([]);
        expect(receiver.at(url)).toHaveLength(0);
        expect(await floatBalance(app, merchant)).toEqual(expectedFloat(availableAfter, plus(before.reserved_balance, held)));
      }
    });
  });

  it('transaction_id is ours and distinct per payout; the account_balance of each is the float after it', async () => {
    const before = await floatBalance(app, merchant);
    const bodies = [b2bBody(merchant, { amount: '1.5' }), b2bBody(merchant, { amount: '2.25' })];
    for (const body of bodies) expectPayoutAnswer(await gw().post(PAYOUT_PATHS.b2b).send(body), 720, body.payout_reference as string);
    const [first, second] = await Promise.all(
      bodies.map((b) => waitForPayoutStatus(app, merchant, b.payout_reference as string, 700, { b2b: true })),
    );
    expect(first.transaction_id).not.toEqual(second.transaction_id);
    expect(first.account_balance).toBe(minus(before.balance, '11.5'));
    expect(second.account_balance).toBe(minus(before.balance, '11.5', '12.25'));
    expect(first.account_balance).toMatch(FOUR_DECIMALS);
  });

  it.each([
    ['PAYBILL paid by BANK', { recipient_type: 'PAYBILL', payment_method: 'BANK' }],
    ['TILL paid by BANK', { recipient_type: 'TILL', payment_method: 'BANK' }],
    ['BANK_ACCOUNT_NUMBER paid by MMONEY_B2B', { recipient_type: 'BANK_ACCOUNT_NUMBER', payment_method: 'MMONEY_B2B' }],
    ['an unknown recipient_type', { recipient_type: 'WALLET' }],
    ['a lower-case recipient_type', { recipient_type: 'paybill' }],
    ['an unknown payment_method', { payment_method: 'CASH' }],
  ])('%s → 721, nothing stored, the reference stays free', async (_case, change) => {
    const before = await floatBalance(app, merchant);
    const counts = await storedCounts(app, merchant.clientId);
    const body = b2bBody(merchant, change);
    const reference = body.payout_reference as string;
    expectPayoutAnswer(await gw().post(PAYOUT_PATHS.b2b).send(body), 721, reference);
    expect(await floatBalance(app, merchant)).toEqual(before);
    expect(await storedCounts(app, merchant.clientId)).toEqual(counts);
    expectPayoutAnswer(await gw().get(b2bStatusPath(reference)), 723);
    // Corrected, the same reference is accepted (to a number that stays pending, so no later settlement moves the
    // float under the next test's feet).
    const corrected = b2bBody(merchant, { payout_reference: reference, recipient_account_number: SANDBOX.account.pending });
    expectPayoutAnswer(await gw().post(PAYOUT_PATHS.b2b).send(corrected), 720, reference);
  });

  it('a reused payout_reference → 409 / 722 DUPLICATE_IGNORED, whatever the body; money moves once', async () => {
    const body = b2bBody(merchant, { amount: '40', recipient_account_number: SANDBOX.account.pending });
    const reference = body.payout_reference as string;
    const before = await floatBalance(app, merchant);
    expectPayoutAnswer(await gw().post(PAYOUT_PATHS.b2b).send(body), 720, reference);
    const after = await floatBalance(app, merchant);
    expect(after).toEqual(expectedFloat(minus(before.balance, 50), plus(before.reserved_balance, 50)));
    expectPayoutAnswer(await gw().post(PAYOUT_PATHS.b2b).send(body), 722, reference, 'DUPLICATE_IGNORED');
    expectPayoutAnswer(
      await gw()
        .post(PAYOUT_PATHS.b2b)
        .send({ ...body, amount: '41' }),
      722,
      reference,
      'DUPLICATE_IGNORED',
    );
    expect(await floatBalance(app, merchant)).toEqual(after);
    expect((await gw().get(b2bStatusPath(reference)).expect(200)).body.amount).toBe('40.0000');
  });

  it('20 identical B2B requests at once → one 720 and 19 × 722, one reservation', async () => {
    const before = await floatBalance(app, merchant);
    const body = b2bBody(merchant, { amount: '60', recipient_account_number: SANDBOX.account.jammed });
    const answers = await Promise.all(Array.from({ length: 20 }, () => gw().post(PAYOUT_PATHS.b2b).send(body)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.response_code === 722)).toHaveLength(19);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(minus(before.balance, 70), plus(before.reserved_balance, 70)));
  });

  it('an unknown reference → 404 / 723; without a token → 401', async () => {
    const reference = `nope-${randomUUID()}`;
    expectPayoutAnswer(await gw().get(b2bStatusPath(reference)), 723);
    expect((await request(app.getHttpServer()).get(b2bStatusPath(reference))).status).toBe(401);
    expect((await request(app.getHttpServer()).post(PAYOUT_PATHS.b2b).send(b2bBody(merchant))).status).toBe(401);
  });

  it('insufficient float → 721 INSUFFICIENT_BALANCE, nothing stored', async () => {
    const poor = await createPayoutMerchant(app, { float: '100' });
    const body = b2bBody(poor, { amount: '90.0001' });
    const counts = await storedCounts(app, poor.clientId);
    expectPayoutAnswer(
      await gateway(app, poor.token).post(PAYOUT_PATHS.b2b).send(body),
      721,
      body.payout_reference as string,
      'INSUFFICIENT_BALANCE',
    );
    expect(await floatBalance(app, poor)).toEqual(expectedFloat(100, 0));
    expect(await storedCounts(app, poor.clientId)).toEqual(counts);
    // Exactly amount + fee = the float is enough.
    const exact = b2bBody(poor, { amount: '90', payout_reference: body.payout_reference });
    expectPayoutAnswer(await gateway(app, poor.token).post(PAYOUT_PATHS.b2b).send(exact), 720, body.payout_reference as string);
    expect((await floatBalance(app, poor)).balance).toBe('0.0000');
  });
});
