import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { MpesaCallbackKind, MpesaGateway } from '../../../src/rails/mpesa/mpesa-gateway';
import {
  B2B_OPTIONAL,
  B2B_REQUEST,
  B2B_RESULT_PAID,
  B2B_RESULT_REFUSED,
  B2C_OPTIONAL,
  B2C_REQUEST,
  B2C_RESULT_PAID,
  B2C_RESULT_REFUSED,
  REVERSAL_REQUEST,
  REVERSAL_RESULT_DONE,
  REVERSAL_RESULT_REFUSED,
  STATUS_OPTIONAL,
  STATUS_REQUEST,
  STATUS_RESULT,
  STK_CALLBACK_CANCELLED,
  STK_CALLBACK_PAID,
  STK_PUSH_REQUEST,
} from '../../fixtures/daraja/documented';
import {
  b2bBody,
  createPayoutMerchant,
  floatBalance,
  localPayoutBody,
  PAYOUT_PATHS,
  payoutRow,
  waitForPayoutStatus,
} from '../../support/disbursement-fixtures';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant, waitFor, waitForPaymentStatus } from '../../support/gateway-fixtures';
import { MpesaSandbox, railCallbacks, railRequest, startMpesaSandbox, unknownAnswers } from '../../support/mpesa-fixtures';
import { dataSource } from '../../support/test-app';

type Row = Record<string, any>;
const keys = (body: object, optional: string[] = []) =>
  Object.keys(body)
    .filter((k) => !optional.includes(k))
    .sort();

/**
 * Issue 29: every Daraja call against Safaricom's documented examples (developer.safaricom.co.ke/apis, pages named
 * in test/fixtures/daraja/documented.ts). What our adapter sends carries the page's fields, and nothing else; the
 * page's own result bodies, posted to our callback URLs with our identifiers, settle the money as docs/rails.md's
 * table says; a result code or status word no page names is logged, counted and held, never a failure.
 */
describe('Daraja as documented (real adapter, stub from the API pages)', () => {
  let sandbox: MpesaSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let payer: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startMpesaSandbox();
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
    payer = await createPayoutMerchant(app, { float: '100000' });
  });
  afterAll(async () => sandbox?.close());
  afterEach(() => {
    Object.assign(sandbox.stub, { plan: () => ({}), answersStatusQueries: true, answersStkQueries: true, statusWord: null });
  });

  /** Posts a documented body to our callback URL of this kind for this request, from an allowed address. */
  async function deliver(kind: MpesaCallbackKind, requestId: string, body: object): Promise<number> {
    const url = new URL(app.get(MpesaGateway).callbackUrl(kind, requestId));
    return (await app.inject({ method: 'POST', url: url.pathname, payload: body, remoteAddress: '127.0.0.1' })).statusCode;
  }

  /** A request's rail row once Daraja took it (its identifiers stored). */
  const taken = (kind: 'PAYMENT' | 'PAYOUT' | 'REVERSAL', id: string) =>
    waitFor(`the ${kind} request taken`, async () => {
      const row = await railRequest(app, kind, id);
      return row?.state === 'SENT' ? row : undefined;
    });

  /** A charge whose push Daraja takes and answers only when the test says (no callback, queries say "processing"). */
  async function pushedCharge(amount = '100'): Promise<{ id: string; row: Row }> {
    sandbox.stub.plan = () => ({ callback: 'never' });
    sandbox.stub.answersStkQueries = false;
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(chargeBody(merchant, { amount }));
    expect(res.status).toBe(200);
    const id = String(res.body.charge_request_id);
    return { id, row: await taken('PAYMENT', id) };
  }

  /** A payout whose B2C or B2B Daraja takes and answers only when the test says. */
  async function heldPayout(body: Record<string, unknown>, path: string): Promise<{ id: string; row: Row }> {
    sandbox.stub.plan = () => ({ callback: 'never' });
    sandbox.stub.answersStatusQueries = false;
    const res = await gateway(app, payer.token).post(path).send(body);
    expect(res.body.response_code).toBe(720);
    const payout = (await payoutRow(app, payer.clientId, body.payout_reference as string))!;
    return { id: String(payout.id), row: await taken('PAYOUT', String(payout.id)) };
  }

  describe('M-Pesa Express Simulate (STK push) and its callback', () => {
    it('sends the page’s fields, and the documented successful callback pays the payment with its receipt', async () => {
      const { id, row } = await pushedCharge('150');
      const sent = sandbox.stub.transactions.find((t) => t.checkoutRequestId === row.operator_request_id)!;
      expect(keys(sent.body)).toEqual(keys(STK_PUSH_REQUEST));
      expect(sent.body.AccountReference.length).toBeLessThanOrEqual(12);
      expect(sent.body.TransactionDesc.length).toBeLessThanOrEqual(13);
      expect(sent.body.Timestamp).toMatch(/^\d{14}$/);
      const paid = { Body: { stkCallback: { ...STK_CALLBACK_PAID.Body.stkCallback, CheckoutRequestID: row.operator_request_id } } };
      expect(await deliver('stk', row.id, paid)).toBe(200);
      const payment = await waitForPaymentStatus(app, merchant, id, 700);
      expect(payment.payer_transaction_id).toBe('NLJ7RT61SV');
    });

    it('the documented unsuccessful callback (1032, cancelled) fails the payment', async () => {
      const { id, row } = await pushedCharge();
      const cancelled = {
        Body: { stkCallback: { ...STK_CALLBACK_CANCELLED.Body.stkCallback, CheckoutRequestID: row.operator_request_id } },
      };
      expect(await deliver('stk', row.id, cancelled)).toBe(200);
      expect((await waitForPaymentStatus(app, merchant, id, 701)).payer_transaction_id).toBe('');
    });

    it('a ResultCode no page names is logged, counted and held (703) until a documented answer', async () => {
      const { id, row } = await pushedCharge();
      const before = await unknownAnswers(app, 'stk_callback');
      const odd = {
        Body: { stkCallback: { ...STK_CALLBACK_CANCELLED.Body.stkCallback, CheckoutRequestID: row.operator_request_id, ResultCode: 4999 } },
      };
      expect(await deliver('stk', row.id, odd)).toBe(200);
      expect(await unknownAnswers(app, 'stk_callback')).toBe(before + 1);
      expect((await railRequest(app, 'PAYMENT', id))!.outcome).toBeNull();
      expect((await railCallbacks(app, row.id)).map((c) => c.effect)).toEqual(['REPEATED']);
      expect((await gateway(app, merchant.token).get(`/v1/transaction/${id}/status`)).body.payment_status).toBe('703');
      // The STK query (the "M-Pesa Express Query" answer, ResultCode a string) now knows: paid.
      sandbox.stub.transactions.find((t) => t.checkoutRequestId === row.operator_request_id)!.resultCode = '0';
      sandbox.stub.answersStkQueries = true;
      await waitForPaymentStatus(app, merchant, id, 700);
    });
  });

  describe('Business To Customer (B2C v3)', () => {
    it('sends the page’s fields (Occassion, optional, left out), and the documented result pays the payout with its receipt', async () => {
      const body = localPayoutBody(payer, { sender_amount: '600', recipient_amount: '600' });
      const { id, row } = await heldPayout(body, PAYOUT_PATHS.local);
      const sent = sandbox.stub.transactions.find((t) => t.originatorConversationId === row.id)!;
      expect(keys(sent.body)).toEqual(keys(B2C_REQUEST, B2C_OPTIONAL));
      const result = {
        Result: { ...B2C_RESULT_PAID.Result, OriginatorConversationID: row.id, ConversationID: row.operator_request_id },
      };
      expect(await deliver('result', row.id, result)).toBe(200);
      await waitForPayoutStatus(app, payer, body.payout_reference as string, 700);
      expect((await payoutRow(app, payer.clientId, body.payout_reference as string))!.rail_reference).toBe('SG632NMUAB');
      expect(id).toBe(row.subject_id);
    });

    it('the documented unsuccessful result (2001) fails the payout and returns amount and fee to the float', async () => {
      const before = await floatBalance(app, payer);
      const body = localPayoutBody(payer, { sender_amount: '650', recipient_amount: '650' });
      const { row } = await heldPayout(body, PAYOUT_PATHS.local);
      const result = {
        Result: { ...B2C_RESULT_REFUSED.Result, OriginatorConversationID: row.id, ConversationID: row.operator_request_id },
      };
      expect(await deliver('result', row.id, result)).toBe(200);
      await waitForPayoutStatus(app, payer, body.payout_reference as string, 701);
      await waitFor('the hold released', async () => ((await floatBalance(app, payer)).balance === before.balance ? true : undefined));
    });

    it('a ResultCode no page names keeps the money held, is counted, and is asked about by transaction status', async () => {
      const before = await unknownAnswers(app, 'result_callback');
      const body = localPayoutBody(payer, { sender_amount: '700', recipient_amount: '700' });
      const { row } = await heldPayout(body, PAYOUT_PATHS.local);
      const queries = sandbox.stub.sent('STATUS', (q) => q.OriginalConversationID === row.id);
      const result = {
        Result: {
          ...B2C_RESULT_REFUSED.Result,
          ResultCode: 'X0042',
          OriginatorConversationID: row.id,
          ConversationID: row.operator_request_id,
        },
      };
      expect(await deliver('result', row.id, result)).toBe(200);
      expect(await unknownAnswers(app, 'result_callback')).toBe(before + 1);
      await waitFor('a status query', () => sandbox.stub.sent('STATUS', (q) => q.OriginalConversationID === row.id) > queries || undefined);
      const status = sandbox.stub.calls.filter((c) => c.operation === 'STATUS' && c.body.OriginalConversationID === row.id).pop()!;
      expect(keys(status.body)).toEqual(keys(STATUS_REQUEST, STATUS_OPTIONAL));
      const payout = (await payoutRow(app, payer.clientId, body.payout_reference as string))!;
      expect({ status: payout.status, hold: payout.hold_status }).toEqual({ status: 703, hold: 'HELD' });
      // The documented "Transaction Status" result (Completed, with its ReceiptNo) settles it.
      expect(await deliver('status', row.id, STATUS_RESULT)).toBe(200);
      await waitForPayoutStatus(app, payer, body.payout_reference as string, 700);
      expect((await payoutRow(app, payer.clientId, body.payout_reference as string))!.rail_reference).toBe('MBN31H462N');
    });

    it('a TransactionStatus word no page names is counted and held; M-Pesa’s duplicate answer is never a failure', async () => {
      const before = await unknownAnswers(app, 'status_callback');
      const body = localPayoutBody(payer, { sender_amount: '720', recipient_amount: '720' });
      const { row } = await heldPayout(body, PAYOUT_PATHS.local);
      const pending = {
        Result: {
          ...STATUS_RESULT.Result,
          ResultParameters: {
            ResultParameter: STATUS_RESULT.Result.ResultParameters.ResultParameter.map((p) =>
              p.Key === 'TransactionStatus' ? { ...p, Value: 'Authorised' } : p,
            ),
          },
        },
      };
      expect(await deliver('status', row.id, pending)).toBe(200);
      expect(await unknownAnswers(app, 'status_callback')).toBe(before + 1);
      expect((await railRequest(app, 'PAYOUT', row.subject_id))!.outcome).toBeNull();
      // Sent again (as after "M-Pesa does not know it"), the B2C meets the page's 500.002.1001 duplicate answer: asked about.
      await dataSource(app).query(`UPDATE rail_requests SET state = 'BUSY', next_query_at = now() WHERE id = $1`, [row.id]);
      await waitFor('the duplicate answer recorded', async () => {
        const again = await railRequest(app, 'PAYOUT', row.subject_id);
        return again?.state === 'UNKNOWN' ? again : undefined;
      });
      expect((await railRequest(app, 'PAYOUT', row.subject_id))!.outcome).toBeNull();
      expect(sandbox.stub.transactions.filter((t) => t.originatorConversationId === row.id)).toHaveLength(1);
      expect((await payoutRow(app, payer.clientId, body.payout_reference as string))!.hold_status).toBe('HELD');
    });
  });

  describe('Business Pay Bill and Business Buy Goods (B2B)', () => {
    it('sends the page’s fields, and the documented result (codes as strings) pays the payout with its receipt', async () => {
      const body = b2bBody(payer, { amount: '2500', payment_account_reference: 'INV-77' });
      const { row } = await heldPayout(body, PAYOUT_PATHS.b2b);
      const sent = sandbox.stub.transactions.find((t) => t.operation === 'B2B' && t.conversationId === row.operator_request_id)!;
      expect(keys(sent.body)).toEqual(keys(B2B_REQUEST, B2B_OPTIONAL));
      expect(sent.body).toMatchObject({
        CommandID: 'BusinessPayBill',
        SenderIdentifierType: '4',
        RecieverIdentifierType: '4',
        AccountReference: 'INV-77',
      });
      const result = {
        Result: {
          ...B2B_RESULT_PAID.Result,
          OriginatorConversationID: row.operator_conversation_id,
          ConversationID: row.operator_request_id,
        },
      };
      expect(await deliver('result', row.id, result)).toBe(200);
      await waitForPayoutStatus(app, payer, body.payout_reference as string, 700, { b2b: true });
      expect((await payoutRow(app, payer.clientId, body.payout_reference as string))!.rail_reference).toBe('QKA81LK5CY');
    });

    it('the documented unsuccessful result (one ResultParameter as an object) fails the payout', async () => {
      const body = b2bBody(payer, {
        amount: '300',
        recipient_type: 'TILL',
        recipient_account_number: '5123456',
        payment_method: 'MMONEY_B2B',
      });
      const { row } = await heldPayout(body, PAYOUT_PATHS.b2b);
      const result = {
        Result: {
          ...B2B_RESULT_REFUSED.Result,
          OriginatorConversationID: row.operator_conversation_id,
          ConversationID: row.operator_request_id,
        },
      };
      expect(await deliver('result', row.id, result)).toBe(200);
      await waitForPayoutStatus(app, payer, body.payout_reference as string, 701, { b2b: true });
    });
  });

  describe('Reversal', () => {
    /** A paid charge, and its reversal's request as Daraja took it (no result yet). */
    async function reversalTaken(): Promise<{ reference: string; row: Row; receipt: string }> {
      // Paid by its callback, which carries the receipt a reversal names (an STK query answer carries none).
      sandbox.stub.plan = () => ({});
      sandbox.stub.answersStkQueries = false;
      const charge = chargeBody(merchant, { amount: '200' });
      const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(charge);
      const paid = await waitForPaymentStatus(app, merchant, String(res.body.charge_request_id), 700);
      sandbox.stub.plan = () => ({ callback: 'never' });
      sandbox.stub.answersStatusQueries = false;
      const reference = `rev-${res.body.charge_request_id}`;
      const answer = await gateway(app, merchant.token)
        .post('/v1/reversals/initiate')
        .send({ reversal_reference: reference, payment_reference: charge.external_reference, reversal_reason: 'Refund' });
      expect(answer.status).toBe(200);
      const row = await waitFor('the reversal taken', async () => {
        const [found] = await dataSource(app).query(
          `SELECT * FROM rail_requests WHERE operation = 'REVERSAL' AND request->'body'->>'TransactionID' = $1 AND state <> 'SENDING'`,
          [paid.payer_transaction_id],
        );
        return found as Row | undefined;
      });
      expect({ state: row.state, outcome: row.outcome }).toEqual({ state: 'SENT', outcome: null });
      return { reference, row, receipt: String(paid.payer_transaction_id) };
    }

    const reversalStatus = async (reference: string) =>
      (await gateway(app, merchant.token).get(`/v1/reversals/${reference}/status`)).body.reversal_status as string;

    it('sends the page’s fields; the documented result reverses, R000002 fails, R000001 is held for an operator', async () => {
      const done = await reversalTaken();
      const sent = sandbox.stub.transactions.find((t) => t.operation === 'REVERSAL' && t.body.TransactionID === done.receipt)!;
      expect(keys(sent.body)).toEqual(keys(REVERSAL_REQUEST));
      const ids = (row: Row) => ({ OriginatorConversationID: row.operator_conversation_id, ConversationID: row.operator_request_id });
      expect(await deliver('result', done.row.id, { Result: { ...REVERSAL_RESULT_DONE.Result, ...ids(done.row) } })).toBe(200);
      await waitFor('the reversal successful', async () => ((await reversalStatus(done.reference)) === 'successful' ? true : undefined));

      const refused = await reversalTaken();
      expect(await deliver('result', refused.row.id, { Result: { ...REVERSAL_RESULT_REFUSED.Result, ...ids(refused.row) } })).toBe(200);
      await waitFor('the reversal failed', async () => ((await reversalStatus(refused.reference)) === 'failed' ? true : undefined));

      const already = await reversalTaken();
      const unknownBefore = await unknownAnswers(app, 'result_callback');
      const reversed = {
        Result: {
          ...REVERSAL_RESULT_REFUSED.Result,
          ...ids(already.row),
          ResultCode: 'R000001',
          ResultDesc: 'The transaction has already been reversed',
        },
      };
      expect(await deliver('result', already.row.id, reversed)).toBe(200);
      const [callback] = await railCallbacks(app, already.row.id);
      expect(callback.effect).toBe('REPEATED');
      expect((await railCallbacks(app, already.row.id)).length).toBe(1);
      expect(await unknownAnswers(app, 'result_callback')).toBe(unknownBefore);
      expect(await reversalStatus(already.reference)).not.toMatch(/successful|failed/);
    });
  });
});
