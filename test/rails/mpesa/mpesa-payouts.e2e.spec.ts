import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { gateway, GatewayMerchant, waitFor } from '../../support/gateway-fixtures';
import {
  b2bBody,
  BasicCredentials,
  cliJson,
  createPayoutMerchant,
  entriesSince,
  expectedFloat,
  expectPayoutAnswer,
  expectSignedCallback,
  expectValidationRefusal,
  floatBalance,
  imtBody,
  journalEntries,
  localPayoutBody,
  minus,
  PAYOUT_PATHS,
  payoutRow,
  runCli,
  setPayoutsCallback,
  storedCounts,
  waitForPayoutStatus,
} from '../../support/disbursement-fixtures';
import { MpesaSandbox, payoutFollowUpsDone, railCallbacks, railRequest, startMpesaSandbox } from '../../support/mpesa-fixtures';
import { dataSource } from '../../support/test-app';

/**
 * Issue 18: payouts through the real M-Pesa adapter against the Daraja stub. MOBILE payouts are B2C with one
 * OriginatorConversationID per payout; paybills and tills are B2B; a result settles or releases the hold once; a
 * queue time-out or a lost answer is asked about by transaction status, never sent again.
 */
describe('M-Pesa payouts (Daraja stub)', () => {
  let sandbox: MpesaSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let basic: BasicCredentials;
  /** Pays out of a USD float: its IMTs pay Kenyan recipients in shillings. */
  let usdMerchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startMpesaSandbox();
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '100000' });
    basic = await setPayoutsCallback(app, merchant, sandbox.receiver.url('/payouts'));
    usdMerchant = await createPayoutMerchant(app, { float: '1000', currency: 'USD' });
  });
  afterAll(async () => sandbox?.close());
  afterEach(() => (sandbox.stub.plan = () => ({})));

  async function payOut(body: Record<string, unknown>, path: string = PAYOUT_PATHS.local, payer = merchant) {
    const res = await gateway(app, payer.token).post(path).send(body);
    expectPayoutAnswer(res, 720, body.payout_reference as string);
    return (await payoutRow(app, payer.clientId, body.payout_reference as string))!;
  }

  /** B2C calls that reached the stub with this request's OriginatorConversationID. */
  const b2cSends = (requestId: string) => sandbox.stub.sent('B2C', (body) => body.OriginatorConversationID === requestId);

  /** B2B calls that reached the stub for this request (found by its result URL, which ends in our id). */
  const b2bSends = (requestId: string) => sandbox.stub.sent('B2B', (body) => String(body.ResultURL).endsWith(`/${requestId}`));

  it('pays a phone by B2C from our payout shortcode, keeps the receipt, and calls the merchant back', async () => {
    const body = localPayoutBody(merchant, { sender_amount: '1500', recipient_amount: '1500', callback_url: sandbox.receiver.url() });
    const payout = await payOut(body);
    const result = await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const request = (await railRequest(app, 'PAYOUT', payout.id))!;
    const sent = sandbox.stub.transactions.find((t) => t.body.OriginatorConversationID === request.id)!;
    expect(sent.body).toMatchObject({
      InitiatorName: 'testapi',
      CommandID: 'BusinessPayment',
      Amount: 1500,
      PartyA: '600996',
      PartyB: body.recipient_phone_number,
    });
    expect(JSON.stringify(result)).toContain(sent.receipt);
    expect((await payoutRow(app, merchant.clientId, body.payout_reference as string))!.rail_reference).toBe(sent.receipt);
    await waitFor('the merchant callback', () => sandbox.receiver.at(body.callback_url as string)[0]);
    expect(b2cSends(request.id)).toBe(1);
  });

  it('a B2C result with a failure code returns the amount and fee to the float (701)', async () => {
    sandbox.stub.plan = () => ({ resultCode: '2040' });
    const before = await floatBalance(app, merchant);
    const body = localPayoutBody(merchant, { sender_amount: '700', recipient_amount: '700' });
    await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 701);
    await waitFor('the hold released', async () => ((await floatBalance(app, merchant)).balance === before.balance ? true : undefined));
  });

  it('a queue time-out is not a failure: the status query settles it, and the B2C is never sent again', async () => {
    sandbox.stub.plan = () => ({ callback: 'timeout' });
    const body = localPayoutBody(merchant, { sender_amount: '800', recipient_amount: '800' });
    const payout = await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const request = (await railRequest(app, 'PAYOUT', payout.id))!;
    expect(sandbox.stub.sent('STATUS', (query) => query.OriginalConversationID === request.id)).toBeGreaterThan(0);
    expect(b2cSends(request.id)).toBe(1);
  });

  it('a B2C whose answer is lost (time-out, 500) is asked about, never re-sent', async () => {
    for (const fault of ['timeout', 'http500'] as const) {
      sandbox.stub.plan = () => ({ fault, callback: 'never' });
      const body = localPayoutBody(merchant, { sender_amount: '900', recipient_amount: '900' });
      const payout = await payOut(body);
      await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
      const request = (await railRequest(app, 'PAYOUT', payout.id))!;
      expect(request.state).toBe('ANSWERED');
      expect(b2cSends(request.id)).toBe(1);
    }
  });

  it('a busy answer (spike arrest) is not an outcome: the same B2C is sent again later and pays once', async () => {
    let first = true;
    sandbox.stub.plan = () => {
      const plan = first ? { fault: 'busy' as const } : {};
      first = false;
      return plan;
    };
    const body = localPayoutBody(merchant, { sender_amount: '50', recipient_amount: '50' });
    const payout = await payOut(body);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const request = (await railRequest(app, 'PAYOUT', payout.id))!;
    expect(b2cSends(request.id)).toBe(2);
    expect(sandbox.stub.transactions.filter((t) => t.body.OriginatorConversationID === request.id)).toHaveLength(1);
  });

  it('B2B pays a paybill (BusinessPayBill with the account reference) and a till (BusinessBuyGoods), and calls the merchant back with the receipt', async () => {
    const paybill = b2bBody(merchant, { amount: '2500', payment_account_reference: 'INV-77', callback_url: sandbox.receiver.url() });
    const till = b2bBody(merchant, {
      amount: '300',
      recipient_type: 'TILL',
      recipient_account_number: '5123456',
      payment_method: 'MMONEY_B2B',
      callback_url: sandbox.receiver.url(),
    });
    for (const [body, command, destination] of [
      [paybill, 'BusinessPayBill', 'paybill'],
      [till, 'BusinessBuyGoods', 'till'],
    ] as const) {
      const payout = await payOut(body, PAYOUT_PATHS.b2b);
      await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700, { b2b: true });
      const request = (await railRequest(app, 'PAYOUT', payout.id))!;
      expect(request.operation).toBe('B2B');
      const sent = sandbox.stub.transactions.find((t) => t.operation === 'B2B' && String(t.body.ResultURL).endsWith(`/${request.id}`))!;
      expect(sent.body).toMatchObject({
        CommandID: command,
        PartyA: '600996',
        PartyB: body.recipient_account_number,
        Amount: Number(body.amount),
        SenderIdentifierType: '4',
        RecieverIdentifierType: '4',
      });
      if (command === 'BusinessPayBill') expect(sent.body.AccountReference).toBe('INV-77');
      // The merchant hears of it (disbursement document §2, B2B result): payment_reference is M-Pesa's receipt.
      const callback = await waitFor('the B2B callback', () => sandbox.receiver.at(body.callback_url as string)[0]);
      expectSignedCallback(callback, merchant, basic);
      expect(callback.body).toMatchObject({
        payout_reference: body.payout_reference,
        transaction_id: payout.id,
        payment_reference: sent.receipt,
        destination,
        payment_status: 700,
        amount: `${body.amount}.0000`,
        currency: 'KES',
        account_number: body.recipient_account_number,
      });
      expect(b2bSends(request.id)).toBe(1);
      // Applied once: a later answer about it (the status query's, when the result was slower than the first question)
      // changes nothing. Its follow-up done, no second merchant callback is coming.
      const [first, ...later] = (await railCallbacks(app, request.id)).map((c) => c.effect);
      expect({ first, later: later.filter((effect) => effect !== 'REPEATED') }).toEqual({ first: 'APPLIED', later: [] });
      await payoutFollowUpsDone(app, payout.id);
      expect(sandbox.receiver.at(body.callback_url as string)).toHaveLength(1);
    }
  });

  it('an IMT to a mobile wallet is a B2C BusinessPayment under its own OriginatorConversationID, settles and calls back the receipt', async () => {
    const body = imtBody(merchant, {
      sender_amount: '1200',
      destination_currency: 'KES',
      exchange_rate: '1',
      recipient_amount: '1200',
      callback_url: sandbox.receiver.url(),
    });
    const payout = await payOut(body, PAYOUT_PATHS.imt);
    expect(payout.kind).toBe('IMT');
    const result = await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
    const request = (await railRequest(app, 'PAYOUT', payout.id))!;
    expect(request.operation).toBe('B2C');
    const sent = sandbox.stub.transactions.filter((t) => t.operation === 'B2C' && t.body.OriginatorConversationID === request.id);
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({
      InitiatorName: 'testapi',
      CommandID: 'BusinessPayment',
      Amount: 1200,
      PartyA: '600996',
      PartyB: body.recipient_phone_number,
    });
    expect(b2cSends(request.id)).toBe(1);
    expect(result.data).toMatchObject({ payment_status: 700, reference: sent[0].receipt, amount: '1200.0000', currency: 'KES' });
    const callback = await waitFor('the IMT callback', () => sandbox.receiver.at(body.callback_url as string)[0]);
    expectSignedCallback(callback, merchant, basic);
    expect(callback.body).toMatchObject({
      payout_reference: body.payout_reference,
      destination: 'mobile_wallet',
      data: { payment_status: 700, reference: sent[0].receipt, amount: '1200.0000', recipient_phone_number: body.recipient_phone_number },
    });
  });

  it('a payout M-Pesa leaves unanswered for 24 hours is jammed (704), settled once by payout:resolve, and never sent again', async () => {
    // M-Pesa takes the B2C, then neither its result nor any status query's result ever comes.
    sandbox.stub.plan = () => ({ callback: 'never' });
    sandbox.stub.answersStatusQueries = false;
    try {
      const body = localPayoutBody(merchant, { sender_amount: '400', recipient_amount: '400', callback_url: sandbox.receiver.url() });
      const reference = body.payout_reference as string;
      const url = body.callback_url as string;
      const payout = await payOut(body);
      const request = await waitFor('the B2C sent and asked about', async () => {
        const row = await railRequest(app, 'PAYOUT', payout.id);
        return row && sandbox.stub.sent('STATUS', (query) => query.OriginalConversationID === row.id) > 0 ? row : undefined;
      });
      // A day passes.
      await dataSource(app).query(
        `UPDATE rail_requests SET created_at = now() - interval '25 hours', next_query_at = now() WHERE id = $1`,
        [request.id],
      );
      await waitForPayoutStatus(app, merchant, reference, 704);
      expect((await railRequest(app, 'PAYOUT', payout.id))!.outcome).toBe('JAMMED');
      expect((await payoutRow(app, merchant.clientId, reference))!.hold_status).toBe('HELD');
      await payoutFollowUpsDone(app, payout.id);
      expect(sandbox.receiver.at(url)).toHaveLength(0); // 704 is not a result: nobody is told yet

      const before = await floatBalance(app, merchant);
      const entries = await journalEntries(app, merchant.clientId);
      const out = cliJson(
        await runCli(
          sandbox.db.url,
          'payout:resolve',
          '--client',
          merchant.clientCode,
          '--reference',
          reference,
          '--status',
          'SUCCESSFUL',
          '--json',
        ),
      );
      expect(out).toMatchObject({ payout_reference: reference, payment_status: 700, hold_status: 'SETTLED' });
      expect(await entriesSince(app, merchant.clientId, entries)).toEqual(['FLOAT_SETTLE']);
      expect(await floatBalance(app, merchant)).toEqual(expectedFloat(before.balance, minus(before.reserved_balance, '410')));
      const callback = await waitFor('the merchant callback', () => sandbox.receiver.at(url)[0]);
      expectSignedCallback(callback, merchant, basic);
      expect(callback.body).toMatchObject({
        payout_reference: reference,
        data: { payment_status: 700, amount: '400.0000', result_description: 'Processed successfully (resolved by operator)' },
      });

      // M-Pesa's result, arriving after all, is kept but moves nothing and tells the merchant nothing again.
      const sent = sandbox.stub.transactions.find((t) => t.body.OriginatorConversationID === request.id)!;
      expect(await sandbox.stub.callBack(sent)).toBe(200);
      await waitFor('the late result recorded', async () =>
        (await railRequest(app, 'PAYOUT', payout.id))!.outcome === 'SUCCEEDED' ? true : undefined,
      );
      await payoutFollowUpsDone(app, payout.id);
      expect(await entriesSince(app, merchant.clientId, entries)).toEqual(['FLOAT_SETTLE']);
      expect((await payoutRow(app, merchant.clientId, reference))!.status).toBe(700);
      expect(sandbox.receiver.at(url)).toHaveLength(1);
      expect(b2cSends(request.id)).toBe(1);
    } finally {
      sandbox.stub.answersStatusQueries = true;
    }
  }, 120_000);

  it('an IMT from a USD float pays the KES recipient_amount by B2C; the float holds and pays sender_amount + fee in USD', async () => {
    // A late result keeps the hold in place long enough to read it.
    sandbox.stub.plan = () => ({ delayMs: 1000 });
    const body = imtBody(usdMerchant, {
      source_currency: 'USD',
      destination_currency: 'KES',
      exchange_rate: '129.5',
      sender_amount: '10.00',
      recipient_amount: '1295',
    });
    const payout = await payOut(body, PAYOUT_PATHS.imt, usdMerchant);
    expect(payout).toMatchObject({ amount: '10.0000', currency: 'USD', recipient_amount: '1295.0000', recipient_currency: 'KES' });
    expect(await floatBalance(app, usdMerchant)).toMatchObject({ currency: 'USD', balance: '980.0000', reserved_balance: '20.0000' });
    const result = await waitForPayoutStatus(app, usdMerchant, body.payout_reference as string, 700);
    expect(result.data).toMatchObject({ amount: '10.0000', currency: 'USD', transaction_cost: '10.0000' });
    const request = (await railRequest(app, 'PAYOUT', payout.id))!;
    const sent = sandbox.stub.transactions.find((t) => t.body.OriginatorConversationID === request.id)!;
    expect(sent.body).toMatchObject({ CommandID: 'BusinessPayment', Amount: 1295, PartyB: body.recipient_phone_number });
    expect(await floatBalance(app, usdMerchant)).toMatchObject({
      currency: 'USD',
      balance: '980.0000',
      ledger_balance: '980.0000',
      reserved_balance: '0.0000',
    });
  });

  it('refuses an IMT whose recipient is paid in USD or in fractional shillings (721) and stores nothing', async () => {
    for (const [payer, body, message] of [
      [merchant, imtBody(merchant), /Kenya shillings only; recipient_amount is in USD/],
      [
        usdMerchant,
        imtBody(usdMerchant, {
          source_currency: 'USD',
          destination_currency: 'KES',
          exchange_rate: '129.55',
          sender_amount: '10',
          recipient_amount: '1295.50',
        }),
        /whole shillings only; recipient_amount 1295.5 has a fractional part/,
      ],
    ] as const) {
      await expectValidationRefusal(app, payer, PAYOUT_PATHS.imt, body, message);
    }
  });

  it('refuses a fractional M-Pesa payout or B2B at acceptance (721) and stores nothing', async () => {
    const before = await storedCounts(app, merchant.clientId);
    const local = localPayoutBody(merchant, { sender_amount: '100.50', recipient_amount: '100.50' });
    const res = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(local);
    expectPayoutAnswer(res, 721, local.payout_reference as string);
    expect(res.body.response_description).toMatch(/whole shillings/);
    const b2b = b2bBody(merchant, { amount: '99.99' });
    expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.b2b).send(b2b), 721, b2b.payout_reference as string);
    expect(await storedCounts(app, merchant.clientId)).toEqual(before);
    expect(new Decimal((await floatBalance(app, merchant)).reserved_balance).isZero()).toBe(true);
  });
});
