import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { MpesaGateway } from '../../../src/rails/mpesa/mpesa-gateway';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  ledgerBalance,
  paymentCount,
  settlementJobDone,
  waitFor,
  waitForPaymentStatus,
} from '../../support/gateway-fixtures';
import { MpesaSandbox, railCallbacks, railRequest, startMpesaSandbox, stubTransaction, unknownAnswers } from '../../support/mpesa-fixtures';
import { dataSource } from '../../support/test-app';
import { cliJson, runCli } from '../../support/disbursement-fixtures';
import { initiateCheckout, waitForCheckout } from '../../support/collections-fixtures';

/**
 * Issue 18: collections through the real M-Pesa adapter against the Daraja stub. A charge is an STK push; the push's
 * callback (or an STK query when the callback is lost) settles it through the settlement path; the receipt is the
 * payer_transaction_id the merchant sees; callbacks are believed only from allowed addresses, on our path, about
 * our requests, and change money once.
 */
describe('M-Pesa collections (Daraja stub)', () => {
  let sandbox: MpesaSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startMpesaSandbox();
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  async function charge(overrides: Record<string, unknown> = {}) {
    const body = chargeBody(merchant, { callback_url: sandbox.receiver.url(), ...overrides });
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    return { body, id: String(res.body.charge_request_id), answer: res.body };
  }

  it('sends an STK push with our shortcode, password and callback URL, and asks the payer to authorise', async () => {
    const { id, answer } = await charge({ amount: '150' });
    expect(answer.next_step).toBe('AUTHORIZE_TRANSACTION');
    const t = await stubTransaction(sandbox.stub, (body) => body.AccountReference === `P${id}`.slice(0, 12));
    expect(t.body).toMatchObject({
      BusinessShortCode: '174379',
      TransactionType: 'CustomerPayBillOnline',
      Amount: 150,
      PartyA: '254712345678',
      PhoneNumber: '254712345678',
      PartyB: '174379',
    });
    const request = await railRequest(app, 'PAYMENT', id);
    expect(t.body.CallBackURL).toBe(app.get(MpesaGateway).callbackUrl('stk', request!.id));
    await waitFor('the callback', () => sandbox.stub.delivered.find((d) => d.url === t.body.CallBackURL));
    expect(sandbox.stub.delivered.find((d) => d.url === t.body.CallBackURL)?.status).toBe(200);
    await waitForPaymentStatus(app, merchant, id, 700);
  });

  it.each([
    ['0', 700],
    ['1', 701],
    ['1032', 701],
    ['1037', 701],
    ['2001', 701],
  ])('result code %s becomes payment status %i; a success keeps the M-Pesa receipt', async (code, status) => {
    sandbox.stub.plan = () => ({ resultCode: code });
    const { id, body } = await charge();
    const result = await waitForPaymentStatus(app, merchant, id, status);
    const t = sandbox.stub.transactions.find((candidate) => candidate.body.AccountReference === `P${id}`.slice(0, 12))!;
    if (status === 700) {
      expect(result.payer_transaction_id).toBe(t.receipt);
      const callback = await waitFor('the merchant callback', () => sandbox.receiver.forReference(String(body.external_reference))[0]);
      expect(callback.body.payer_transaction_id).toBe(t.receipt);
    } else {
      expect(result.payer_transaction_id).toBe('');
    }
    sandbox.stub.plan = () => ({});
  });

  it('a hosted-checkout payment is an STK push: a cancelled push leaves the checkout payable, a confirmed one pays it with the receipt', async () => {
    const { body, reference, mtid } = await initiateCheckout(app, merchant, sandbox.receiver, { amount: 1700 });
    const pay = () => request(app.getHttpServer()).post(`/checkout/${reference}/pay`).send({ msisdn: '254712345678' });
    const pushesOf = (paymentId: string) =>
      sandbox.stub.transactions.filter((t) => t.body.AccountReference === `P${paymentId}`.slice(0, 12));
    const callbacks = (count: number) =>
      waitFor(`${count} checkout callback(s)`, () =>
        sandbox.receiver.at(body.callback_url).length >= count ? sandbox.receiver.at(body.callback_url) : undefined,
      );

    // The payer cancels the push on the phone (1032): the checkout is open again and the merchant hears of it.
    sandbox.stub.plan = () => ({ resultCode: '1032' });
    expect((await pay()).body).toEqual({ status: 851, payment_status: 703 });
    const [cancelled] = await callbacks(1);
    expect(cancelled.body).toMatchObject({ status: 803, merchant_transaction_id: mtid });
    expect(cancelled.body.payments).toEqual([expect.objectContaining({ payment_status: 701, payer_transaction_id: '' })]);
    sandbox.stub.plan = () => ({});

    // The payer tries again and confirms.
    expect((await pay()).body).toEqual({ status: 851, payment_status: 703 });
    const paid = await waitForCheckout(app, merchant, mtid, 801);
    expect(paid.payments.map((p: { payment_status: number }) => p.payment_status)).toEqual([701, 700]);
    const payment = paid.payments[1];
    const [push] = pushesOf(payment.transaction_id);
    expect(pushesOf(payment.transaction_id)).toHaveLength(1);
    expect(push.body).toMatchObject({
      TransactionType: 'CustomerPayBillOnline',
      Amount: 1700,
      PhoneNumber: '254712345678',
      PartyB: '174379',
    });
    expect(push.body.CallBackURL).toBe(
      app.get(MpesaGateway).callbackUrl('stk', (await railRequest(app, 'PAYMENT', payment.transaction_id))!.id),
    );
    expect(payment).toMatchObject({ amount: '1700.0000', payer_transaction_id: push.receipt });
    expect(pushesOf(paid.payments[0].transaction_id)).toHaveLength(1);

    const [, settled] = await callbacks(2);
    expect(settled.body).toMatchObject({ status: 801, checkout_reference: reference, merchant_transaction_id: mtid, amount: '1700' });
    expect(settled.body.payments).toEqual([
      expect.objectContaining({ payment_status: 701 }),
      expect.objectContaining({ payment_status: 700, transaction_id: payment.transaction_id, payer_transaction_id: push.receipt }),
    ]);
  });

  it('an unknown result code leaves the payment pending (703), counted, until an STK query says what happened', async () => {
    const queriesBefore = await unknownAnswers(app, 'stk_query');
    sandbox.stub.plan = () => ({ resultCode: '9999' });
    const { id } = await charge();
    const row = await waitFor('the callback', async () => {
      const found = await railRequest(app, 'PAYMENT', id);
      return found && (await railCallbacks(app, found.id)).length > 0 ? found : undefined;
    });
    // The STK query's answer (the same unknown code) was read and counted: still no outcome.
    await waitFor('an STK query answered and counted', async () =>
      (await unknownAnswers(app, 'stk_query')) > queriesBefore ? true : undefined,
    );
    expect(await unknownAnswers(app, 'stk_callback')).toBeGreaterThan(0);
    expect((await gateway(app, merchant.token).get(`/v1/transaction/${id}/status`)).body.payment_status).toBe('703');
    expect((await railRequest(app, 'PAYMENT', id))!.outcome).toBeNull();
    // M-Pesa now knows: the next query settles it.
    sandbox.stub.transactions.find((t) => t.checkoutRequestId === row.operator_request_id)!.resultCode = '0';
    await waitForPaymentStatus(app, merchant, id, 700);
    sandbox.stub.plan = () => ({});
  });

  it('a lost STK callback is settled by STK query; a late callback afterwards changes nothing', async () => {
    sandbox.stub.plan = () => ({ callback: 'never' });
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);
    const { id } = await charge({ amount: '300' });
    await waitForPaymentStatus(app, merchant, id, 700);
    const request = (await railRequest(app, 'PAYMENT', id))!;
    expect(request.outcome).toBe('SUCCEEDED');
    const t = sandbox.stub.transactions.find((candidate) => candidate.checkoutRequestId === request.operator_request_id)!;
    expect(await sandbox.stub.callBack(t)).toBe(200);
    await waitFor('the late callback kept', async () => ((await railCallbacks(app, request.id)).length === 1 ? true : undefined));
    expect((await railCallbacks(app, request.id))[0].effect).toBe('REPEATED');
    // REPEATED queues nothing: the balance is final once the callback is kept.
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe((Number(before) + 290).toFixed(4));
    sandbox.stub.plan = () => ({});
  });

  it('a callback delivered twice credits the merchant once and is kept twice', async () => {
    sandbox.stub.plan = () => ({ callback: 'twice' });
    const before = await ledgerBalance(app, merchant.settlementAccountNumber);
    const { id } = await charge({ amount: '500' });
    await waitForPaymentStatus(app, merchant, id, 700);
    const request = (await railRequest(app, 'PAYMENT', id))!;
    const kept = await waitFor('both callbacks kept', async () => {
      const rows = await railCallbacks(app, request.id);
      return rows.length === 2 ? rows : undefined;
    });
    expect(kept.map((row) => row.effect).sort()).toEqual(['APPLIED', 'REPEATED']);
    await waitFor('the settlement done', async () => ((await settlementJobDone(app, id)) ? true : undefined));
    expect(await ledgerBalance(app, merchant.settlementAccountNumber)).toBe((Number(before) + 490).toFixed(4));
    sandbox.stub.plan = () => ({});
  });

  it('forged callbacks change nothing: outside the allow-list, off our path, or about no request of ours', async () => {
    sandbox.stub.plan = () => ({ callback: 'never' });
    const { id } = await charge();
    const request = await waitFor('the push sent', async () => {
      const row = await railRequest(app, 'PAYMENT', id);
      return row?.operator_request_id ? row : undefined;
    });
    const gw = app.get(MpesaGateway);
    const success = {
      Body: {
        stkCallback: {
          MerchantRequestID: 'x',
          CheckoutRequestID: request.operator_request_id,
          ResultCode: 0,
          ResultDesc: 'ok',
          CallbackMetadata: { Item: [{ Name: 'MpesaReceiptNumber', Value: 'FORGED0001' }] },
        },
      },
    };
    const post = (url: string, remoteAddress = '127.0.0.1', payload: unknown = success) =>
      app.inject({ method: 'POST', url: new URL(url).pathname, payload: payload as object, remoteAddress });

    expect((await post(gw.callbackUrl('stk', request.id), '198.51.100.7')).statusCode).toBe(403);
    expect((await post(gw.callbackUrl('stk', request.id).replace(gw.callbackToken, 'f'.repeat(32)))).statusCode).toBe(404);
    const unknown = await post(gw.callbackUrl('stk', randomUUID()));
    expect(unknown.statusCode).toBe(200);
    const otherPush = { Body: { stkCallback: { ...success.Body.stkCallback, CheckoutRequestID: 'ws_CO_someone_else' } } };
    expect((await post(gw.callbackUrl('stk', request.id), '127.0.0.1', otherPush)).statusCode).toBe(200);
    expect((await post(gw.callbackUrl('stk', request.id), '127.0.0.1', { hello: 'world' })).statusCode).toBe(400);

    const row = (await railRequest(app, 'PAYMENT', id))!;
    expect(row.outcome).toBeNull();
    expect((await railCallbacks(app, request.id)).map((c) => c.effect)).toEqual(['UNMATCHED']);
    expect((await gateway(app, merchant.token).get(`/v1/transaction/${id}/status`)).body.payment_status).toBe('703');
    // The real answer still settles it (the stub's STK query knows it succeeded).
    await waitForPaymentStatus(app, merchant, id, 700);
    sandbox.stub.plan = () => ({});
  });

  it('admin rails:status shows what is in flight at M-Pesa per operation and state, and how old', async () => {
    // A push lost on its way (never taken, no callback): it stays unknown until its day is over.
    sandbox.stub.plan = () => ({ fault: 'timeout', taken: false, callback: 'never' });
    const { id } = await charge();
    await waitFor('the push recorded as unknown', async () =>
      (await railRequest(app, 'PAYMENT', id))?.state === 'UNKNOWN' ? true : undefined,
    );
    const status = cliJson(await runCli(sandbox.db.url, 'rails:status', '--json'));
    expect(status.in_flight).toEqual(
      expect.arrayContaining([{ rail: 'mpesa', operation: 'STK_PUSH', state: 'UNKNOWN', count: 1, oldest_seconds: expect.any(Number) }]),
    );
    // The same in /metrics, for an alert on a rail that stops answering.
    const metrics = (await request(app.getHttpServer()).get('/metrics').expect(200)).text;
    expect(metrics).toContain('paygate_rail_requests_in_flight{rail="mpesa",operation="STK_PUSH",state="UNKNOWN"} 1');
    expect(metrics).toMatch(/^paygate_rail_requests_oldest_seconds\{rail="mpesa",operation="STK_PUSH",state="UNKNOWN"\} \d+$/m);
    sandbox.stub.plan = () => ({});
  });

  it('a push with no answer for 24 hours is jammed (704), never pushed again', async () => {
    sandbox.stub.plan = () => ({ fault: 'timeout', taken: false, callback: 'never' });
    const { id } = await charge();
    const request = await waitFor('the push recorded as unknown', async () => {
      const row = await railRequest(app, 'PAYMENT', id);
      return row?.state === 'UNKNOWN' ? row : undefined;
    });
    // A day passes.
    await dataSource(app).query(`UPDATE rail_requests SET created_at = now() - interval '25 hours', next_query_at = now() WHERE id = $1`, [
      request.id,
    ]);
    await waitForPaymentStatus(app, merchant, id, 704);
    expect((await railRequest(app, 'PAYMENT', id))!.outcome).toBe('JAMMED');
    expect(sandbox.stub.sent('STK_PUSH', (body) => body.AccountReference === `P${id}`.slice(0, 12))).toBe(1);
    sandbox.stub.plan = () => ({});
  });

  it('refuses a fractional amount at acceptance (M-Pesa moves whole shillings) and stores nothing', async () => {
    const count = await paymentCount(app, merchant.clientId);
    const res = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { amount: '100.50' }));
    expect(res.status).toBe(400);
    expect(res.body.status_code).toBe(172);
    expect(JSON.stringify(res.body)).toMatch(/whole shillings/);
    const withCharge = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { amount: '100', add_transaction_charge: true, transaction_charge: '2.5' }));
    expect(withCharge.status).toBe(400);
    expect(await paymentCount(app, merchant.clientId)).toBe(count);
  });

  it('a collection reversal of an M-Pesa payment is a Daraja reversal of its receipt', async () => {
    // Paid by its callback, which carries the receipt (an STK query answer carries none).
    sandbox.stub.answersStkQueries = false;
    const { id, body } = await charge({ amount: '200' });
    const settled = await waitForPaymentStatus(app, merchant, id, 700);
    sandbox.stub.answersStkQueries = true;
    const reference = `rev-${randomUUID()}`;
    const res = await gateway(app, merchant.token)
      .post('/v1/reversals/initiate')
      .send({ reversal_reference: reference, payment_reference: body.external_reference, reversal_reason: 'Customer refund' });
    expect(res.status).toBe(200);
    const status = await waitFor('the reversal final', async () => {
      const answer = await gateway(app, merchant.token).get(`/v1/reversals/${reference}/status`);
      return answer.body.reversal_status === 'successful' ? answer.body : undefined;
    });
    const reversal = sandbox.stub.transactions.find(
      (t) => t.operation === 'REVERSAL' && t.body.TransactionID === settled.payer_transaction_id,
    );
    expect(reversal?.body).toMatchObject({ CommandID: 'TransactionReversal', Amount: 200, RecieverIdentifierType: '11' });
    expect(status.provider_transaction_id ?? JSON.stringify(status)).toContain(reversal!.receipt);
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM rail_requests WHERE operation = 'REVERSAL'`);
    expect(n).toBe(1);
  });
});
