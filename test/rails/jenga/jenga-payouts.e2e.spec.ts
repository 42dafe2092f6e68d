import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { transferReference } from '../../../src/rails/jenga/jenga-gateway';
import { closeTogether, gateway, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox, waitFor } from '../../support/gateway-fixtures';
import {
  b2bBody,
  createPayoutMerchant,
  expectPayoutAnswer,
  expectValidationRefusal,
  floatBalance,
  imtBody,
  localPayoutBody,
  minus,
  PAYOUT_FEE,
  PAYOUT_PATHS,
  payoutRow,
  storedCounts,
  waitForPayoutStatus,
} from '../../support/disbursement-fixtures';
import { JENGA_PATHS, JengaPlan, JengaStub } from '../../support/jenga-stub';
import { railRequest } from '../../support/mpesa-fixtures';

/**
 * Issue 19 (bank): BANK payouts and B2B to bank accounts as PesaLink transfers through Jenga, against the Jenga stub:
 * merchant token, signed requests, our payout's reference on every send and query, outcomes applied once, a lost
 * answer asked about and never re-sent, and the bank code checked before acceptance. Issue 29: each call as its page
 * documents it, and the status query's documented states (an unknown one held and counted).
 */
describe('Jenga PesaLink payouts (stub)', () => {
  let stub: JengaStub;
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  /** Pays out of a USD float: its IMTs pay Kenyan bank accounts in shillings. */
  let usdMerchant: GatewayMerchant;

  beforeAll(async () => {
    stub = await new JengaStub().start();
    sandbox = await startIsolatedSandbox({
      ...stub.env(),
      JENGA_TIMEOUT_MS: '1000',
      RAIL_RECONCILE_AFTER_MS: '300',
      PAYOUT_RECONCILE_AFTER_MS: '300',
    });
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '100000' });
    usdMerchant = await createPayoutMerchant(app, { float: '1000', currency: 'USD' });
  });
  afterAll(async () => {
    await closeTogether(
      () => sandbox?.close(),
      () => stub?.close(),
    );
  });
  afterEach(() => {
    stub.plan = () => ({});
    expect(stub.badSignatures).toEqual([]);
  });

  const bankBody = (overrides: Record<string, unknown> = {}) =>
    localPayoutBody(merchant, {
      destination_type: 'BANK',
      destination_name: 'BANK_KEN',
      recipient_account_number: '0240198765432',
      recipient_bank_code: '11',
      recipient_account_name: 'Wanjiku Kamau',
      ...overrides,
    });

  /** An IMT to a bank account PesaLink reaches: KES to USD unless overridden (imtBody). */
  const imtToBank = (payer: GatewayMerchant, overrides: Record<string, unknown> = {}) =>
    imtBody(payer, {
      destination_type: 'BANK',
      destination_name: 'BANK_KEN',
      recipient_account_number: '0240198765432',
      recipient_bank_code: '11',
      ...overrides,
    });

  /** From the USD float to shillings: 100 USD at 129.5055 KES. */
  const usdToKes = { source_currency: 'USD', destination_currency: 'KES', exchange_rate: '129.5055', sender_amount: '100' };

  async function payOut(body: Record<string, unknown>, path: string = PAYOUT_PATHS.local, payer = merchant) {
    const res = await gateway(app, payer.token).post(path).send(body);
    expectPayoutAnswer(res, 720, body.payout_reference as string);
    return (await payoutRow(app, payer.clientId, body.payout_reference as string))!;
  }

  it('sends a signed PesaLink transfer from our source account, referenced by the payout, and settles it (700)', async () => {
    const body = bankBody({ sender_amount: '1250.50', recipient_amount: '1250.50' });
    const payout = await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const transfer = stub.transfers.find((t) => t.body.transfer.reference === transferReference(String(payout.id)))!;
    expect(transfer.body).toMatchObject({
      source: { countryCode: 'KE', name: 'Paygate Ltd', accountNumber: '0011547896523' },
      destination: { type: 'bank', countryCode: 'KE', name: 'Wanjiku Kamau', bankCode: '11', accountNumber: '0240198765432' },
      transfer: { type: 'PesaLink', amount: '1250.50', currencyCode: 'KES', reference: expect.stringMatching(/^\d{12}$/) },
    });
    expect((await payoutRow(app, merchant.clientId, body.payout_reference as string))!.rail_reference).toBe(transfer.transactionId);
    expect(stub.sent(transfer.body.transfer.reference)).toBe(1);
  });

  it('a transfer the bank fails returns the amount and fee to the float (701)', async () => {
    stub.plan = () => ({ status: 'PENDING', states: ['Failed'] });
    const before = await floatBalance(app, merchant);
    const body = bankBody({ sender_amount: '300', recipient_amount: '300' });
    await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 701);
    await waitFor('the hold released', async () => ((await floatBalance(app, merchant)).balance === before.balance ? true : undefined));
  });

  it('a pending transfer, and one whose answer was lost (time-out or 500), is settled by the status query, never re-sent', async () => {
    for (const [plan, status] of [
      [{ status: 'PENDING' }, 700],
      [{ fault: 'timeout' }, 700],
      [{ fault: 'http500', states: ['Failed'] }, 701],
    ] as const) {
      stub.plan = () => plan;
      const body = bankBody({ sender_amount: '200', recipient_amount: '200' });
      const payout = await payOut(body);
      await waitForPayoutStatus(app, merchant, body.payout_reference as string, status);
      expect(stub.sent(transferReference(String(payout.id)))).toBe(1);
      expect((await railRequest(app, 'PAYOUT', payout.id))!.state).toBe('ANSWERED');
    }
  });

  it('a transfer Jenga never took (busy, then unknown to Jenga) is sent again under the same reference and paid once', async () => {
    let first = true;
    stub.plan = () => {
      const plan = first ? { fault: 'http500' as const, taken: false } : {};
      first = false;
      return plan;
    };
    const body = bankBody({ sender_amount: '75', recipient_amount: '75' });
    const payout = await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const reference = transferReference(String(payout.id));
    expect(stub.sent(reference)).toBe(2);
    expect(stub.transfers.filter((t) => t.body.transfer.reference === reference)).toHaveLength(1);
  });

  it('B2B to a bank account goes to an Equity account by PesaLink', async () => {
    const body = b2bBody(merchant, {
      recipient_type: 'BANK_ACCOUNT_NUMBER',
      recipient_account_number: '1180123456789',
      payment_method: 'BANK',
      amount: '5000',
    });
    const payout = await payOut(body, PAYOUT_PATHS.b2b);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700, { b2b: true });
    const transfer = stub.transfers.find((t) => t.body.transfer.reference === transferReference(String(payout.id)))!;
    expect(transfer.body.destination).toMatchObject({ bankCode: '68', accountNumber: '1180123456789' });
  });

  it('an IMT to a bank sends recipient_amount in shillings with two decimals; the USD float pays sender_amount + fee', async () => {
    const before = await floatBalance(app, usdMerchant);
    const body = imtToBank(usdMerchant, { ...usdToKes, recipient_amount: '12950.55' });
    const payout = await payOut(body, PAYOUT_PATHS.imt, usdMerchant);
    await waitForPayoutStatus(app, usdMerchant, body.payout_reference as string, 700);
    const transfer = stub.transfers.find((t) => t.body.transfer.reference === transferReference(String(payout.id)))!;
    expect(transfer.body.transfer).toMatchObject({ amount: '12950.55', currencyCode: 'KES' });
    expect(await floatBalance(app, usdMerchant)).toMatchObject({
      currency: 'USD',
      balance: minus(before.balance, '100', PAYOUT_FEE),
      reserved_balance: '0.0000',
    });
  });

  it('refuses at acceptance an IMT whose recipient is paid in USD, or in fractions of a cent (721); stores nothing', async () => {
    for (const [payer, body, message] of [
      [merchant, imtToBank(merchant), /Kenya shillings only; recipient_amount is in USD/],
      [usdMerchant, imtToBank(usdMerchant, { ...usdToKes, recipient_amount: '12950.551' }), /cents at most; recipient_amount 12950.551/],
    ] as const) {
      await expectValidationRefusal(app, payer, PAYOUT_PATHS.imt, body, message);
    }
  });

  it('refuses at acceptance a bank PesaLink does not reach, more than two decimals, or more than KES 999,999; stores nothing', async () => {
    const before = await storedCounts(app, merchant.clientId);
    for (const [overrides, message] of [
      [{ recipient_bank_code: '97' }, /recipient_bank_code 97/],
      [{ sender_amount: '100.505', recipient_amount: '100.505' }, /cents/],
      [{ sender_amount: '1000000', recipient_amount: '1000000' }, /999,999/],
    ] as const) {
      const body = bankBody(overrides);
      const res = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body);
      expectPayoutAnswer(res, 721, body.payout_reference as string);
      expect(res.body.response_description).toMatch(message);
    }
    expect(await storedCounts(app, merchant.clientId)).toEqual(before);
  });

  /**
   * Every Jenga call the bank rail makes, pinned to its page on developer.jengahq.io: "Generate Token", "PesaLink -
   * Send to Bank Account", "Query Transaction Details". The stub checks each request as documented (the RSA
   * signature over the page's formula included) and answers the documented bodies.
   */
  describe('each call as documented', () => {
    /** A BANK payout of `amount` shillings under `plan`, accepted (720); its PesaLink reference. */
    async function payOutToBank(amount: string, plan: JengaPlan = {}) {
      stub.plan = () => plan;
      const body = localPayoutBody(merchant, {
        destination_type: 'BANK',
        destination_name: 'BANK_KEN',
        recipient_account_number: '0240198765432',
        recipient_bank_code: '01',
        recipient_account_name: 'Tom Doe',
        sender_amount: amount,
        recipient_amount: amount,
      });
      const res = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body);
      expectPayoutAnswer(res, 720, body.payout_reference as string);
      const payout = (await payoutRow(app, merchant.clientId, body.payout_reference as string))!;
      return { reference: body.payout_reference as string, payoutId: String(payout.id), transfer: transferReference(String(payout.id)) };
    }

    const queriesOf = (transfer: string) => stub.calls.filter((call) => call.path === `${JENGA_PATHS.details}${transfer}`);

    /** paygate_rail_unknown_answers_total for the bank rail and this call, as /metrics shows it. */
    async function unknownAnswers(call: string): Promise<number> {
      const metrics = (await request(app.getHttpServer()).get('/metrics')).text;
      const line = metrics.split('\n').find((l) => l.startsWith(`paygate_rail_unknown_answers_total{rail="bank",call="${call}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    }

    it('"Generate Token": Api-Key header and {merchantCode, consumerSecret}; the accessToken is the bearer of every call until it expires', async () => {
      const { reference } = await payOutToBank('150');
      await waitForPayoutStatus(app, merchant, reference, 700);
      await payOutToBank('160').then(({ reference: second }) => waitForPayoutStatus(app, merchant, second, 700));

      const tokenCalls = stub.calls.filter((call) => call.path === JENGA_PATHS.token);
      // Documented answer: expiresIn a date-time 15 minutes on; one token serves both transfers.
      expect(tokenCalls).toHaveLength(1);
      expect(tokenCalls[0]).toMatchObject({
        method: 'POST',
        headers: { 'api-key': JengaStub.CREDENTIALS.JENGA_API_KEY, 'content-type': 'application/json' },
        body: { merchantCode: JengaStub.CREDENTIALS.JENGA_MERCHANT_CODE, consumerSecret: JengaStub.CREDENTIALS.JENGA_CONSUMER_SECRET },
      });
      expect(Object.keys(tokenCalls[0].body!).sort()).toEqual(['consumerSecret', 'merchantCode']);
      for (const call of stub.calls.filter((c) => c.path !== JENGA_PATHS.token)) {
        expect(call.headers.authorization).toMatch(/^Bearer [\w-]+$/);
      }
    });

    it('"PesaLink - Send to Bank Account": the documented body and types, signed over amount+currency+reference+name+account; SUCCESS pays (700)', async () => {
      const before = await floatBalance(app, merchant);
      const { reference, transfer } = await payOutToBank('1250.50');
      await waitForPayoutStatus(app, merchant, reference, 700);

      const send = stub.calls.find((call) => call.path === JENGA_PATHS.pesalink && call.body?.transfer?.reference === transfer)!;
      expect(send.method).toBe('POST');
      expect(send.headers['content-type']).toBe('application/json');
      // The stub verified `Signature` with the public key over the documented concatenation (no badSignatures).
      expect(send.headers.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(send.body).toEqual({
        source: { countryCode: 'KE', name: 'Paygate Ltd', accountNumber: '0011547896523' },
        destination: { type: 'bank', countryCode: 'KE', name: 'Tom Doe', bankCode: '01', accountNumber: '0240198765432' },
        transfer: {
          type: 'PesaLink',
          amount: '1250.50',
          currencyCode: 'KES',
          reference: transfer,
          date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
          description: expect.any(String),
        },
      });
      expect(stub.sent(transfer)).toBe(1);
      // Paid once: the amount and fee leave the float, nothing stays reserved; Jenga's transactionId is the reference.
      expect(await floatBalance(app, merchant)).toMatchObject({
        balance: minus(before.balance, '1250.50', PAYOUT_FEE),
        reserved_balance: '0.0000',
      });
      expect((await payoutRow(app, merchant.clientId, reference))!.rail_reference).toBe(stub.transfer(transfer)!.transactionId);
    });

    it('"Query Transaction Details": a pending transfer is asked by GET on its reference, signed over the reference; "Success" (2) pays it', async () => {
      const { reference, transfer } = await payOutToBank('210', { status: 'PENDING', states: ['Pending', 'Pending', 'Success'] });
      await waitForPayoutStatus(app, merchant, reference, 700);

      const queries = queriesOf(transfer);
      expect(queries).toHaveLength(3);
      for (const query of queries) {
        expect(query).toMatchObject({ method: 'GET', body: null, headers: { signature: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/) } });
      }
      expect(stub.sent(transfer)).toBe(1);
    });

    it('"Query Transaction Details": "Failed" (1) after pending, or after a lost (500) or timed-out send, releases amount and fee once (701)', async () => {
      for (const plan of [
        { status: 'PENDING', states: ['Pending', 'Failed'] },
        { fault: 'http500', states: ['Failed'] },
        { fault: 'timeout', states: ['Pending', 'Failed'] },
      ] as const) {
        const before = await floatBalance(app, merchant);
        const { reference, payoutId, transfer } = await payOutToBank('320', plan);
        await waitForPayoutStatus(app, merchant, reference, 701);
        expect(await floatBalance(app, merchant)).toMatchObject({ balance: before.balance, reserved_balance: '0.0000' });
        expect(await railRequest(app, 'PAYOUT', payoutId)).toMatchObject({ state: 'ANSWERED', outcome: 'FAILED', result_code: '1' });
        expect(stub.sent(transfer)).toBe(1);
      }
    });

    it('a state word the pages do not give is logged and counted, and the transfer stays held and asked until Jenga says', async () => {
      const countedBefore = await unknownAnswers('transaction-details');
      const before = await floatBalance(app, merchant);
      const { reference, payoutId, transfer } = await payOutToBank('430', { status: 'PENDING', states: ['Reversed'] });
      // Two answers of the unknown word: the first was read through, and the transfer was asked again.
      await waitFor('the unknown state asked about twice', () => stub.transfer(transfer)!.queries >= 2);
      await waitForPayoutStatus(app, merchant, reference, 703);
      expect(await railRequest(app, 'PAYOUT', payoutId)).toMatchObject({ outcome: null });
      expect(await floatBalance(app, merchant)).toMatchObject({ balance: minus(before.balance, '430', PAYOUT_FEE) });

      const held = stub.transfer(transfer)!;
      const unknownAnswered = held.queries;
      held.states = ['Success'];
      await waitForPayoutStatus(app, merchant, reference, 700);
      expect(await unknownAnswers('transaction-details')).toBe(countedBefore + unknownAnswered);
      expect(stub.sent(transfer)).toBe(1);
    });

    it('a send answer whose data.status is neither SUCCESS nor PENDING is counted and settled by the query, never failed at the send', async () => {
      const countedBefore = await unknownAnswers('pesalink');
      const { reference, transfer } = await payOutToBank('540', { status: 'ACCEPTED', states: ['Success'] });
      await waitForPayoutStatus(app, merchant, reference, 700);
      expect(await unknownAnswers('pesalink')).toBe(countedBefore + 1);
      expect(queriesOf(transfer)).toHaveLength(1);
    });
  });
});
