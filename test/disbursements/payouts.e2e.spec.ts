import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  callbackLog,
  finishedCallbackLog,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ReceivedCallback,
  startIsolatedSandbox,
  stopClaiming,
  waitFor,
} from '../support/gateway-fixtures';
import {
  b2bBody,
  bankPayoutBody,
  cliJson,
  createPayoutMerchant,
  dec,
  expectedFloat,
  expectPayoutAnswer,
  expectSignedCallback,
  FloatBalance,
  floatBalance,
  imtBody,
  minus,
  mobilePayoutBody,
  PAYOUT_FEE,
  PAYOUT_PATHS,
  payoutRow,
  plus,
  runCli,
  SANDBOX,
  SANDBOX_STATUS,
  SandboxRow,
  statusPath,
  waitForPayoutStatus,
  waitForRailAnswer,
} from '../support/disbursement-fixtures';

const SETTLE_DELAY_MS = 300;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const FOUR_DECIMALS = /^-?\d+\.\d{4}$/;
const ROWS: SandboxRow[] = ['ok', 'otp', 'authorize', 'failed', 'pending', 'jammed'];

/**
 * Local payouts (MOBILE and BANK) and international transfers end to end in the sandbox (disbursement document
 * §2–§7; provider contract §5–§7, §10 "Payouts"): every row of the sandbox table, the status query in the payout
 * result shape, the money on the float, signed callbacks to the request's callback_url and to the client's
 * `payouts` callback URL, the recipient's SMS, duplicates (722) and unknown references (723).
 */
describe('local payouts and international transfers (sandbox rails)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  /** The client's B2C notification URL (`callback:set --kind payouts`) and the Basic credentials we present there. */
  let payoutsUrl: string;
  const payoutsBasic = {
    username: `payouts-${randomUUID().slice(0, 8)}`,
    password: `pw-${randomUUID()}`,
  };

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS),
      CALLBACK_RETRY_DELAYS_MS: '300,600,900',
    });
    ({ app, receiver } = sandbox);
    merchant = await createPayoutMerchant(app);
    payoutsUrl = receiver.url(`/b2c-notifications/${randomUUID()}`);
    const set = cliJson(
      await runCli(
        sandbox.db.url,
        'callback:set',
        '--client',
        merchant.clientCode,
        '--kind',
        'payouts',
        '--url',
        payoutsUrl,
        '--username',
        payoutsBasic.username,
        '--password',
        payoutsBasic.password,
        '--json',
      ),
    );
    expect(set).toMatchObject({
      client_code: merchant.clientCode,
      callback_url: payoutsUrl,
    });
  }, 120_000);
  afterAll(async () => sandbox?.close());

  const gw = () => gateway(app, merchant.token);

  async function receivedAt(url: string, count = 1): Promise<ReceivedCallback[]> {
    return waitFor(`${count} callback(s) at ${url}`, () => (receiver.at(url).length >= count ? receiver.at(url) : undefined));
  }

  function forPayout(url: string, reference: string): ReceivedCallback[] {
    return receiver.at(url).filter((c) => c.body.payout_reference === reference);
  }

  /**
   * Waits until every delivery of a final payout's result is final, and expects each delivered at the first attempt:
   * the deliveries are written with the status, so no callback of the payout is still to come.
   */
  async function toldOnce(reference: string): Promise<void> {
    const { deliveries } = await waitFor(`the deliveries of ${reference} to finish`, async () => {
      const log = await callbackLog(app, merchant, reference);
      return log.deliveries.every((d) => d.status !== 'PENDING') ? log : undefined;
    });
    expect(deliveries.length).toBeGreaterThan(0);
    for (const delivery of deliveries) expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 1 });
  }

  /** Float after a payout of `amount` ended in `status`, from the float before it. */
  function floatAfter(before: FloatBalance, amount: string, status: number): FloatBalance {
    const held = plus(amount, PAYOUT_FEE);
    if (status === 700) return expectedFloat(minus(before.balance, held), before.reserved_balance);
    if (status === 701) return expectedFloat(before.balance, before.reserved_balance);
    return expectedFloat(minus(before.balance, held), plus(before.reserved_balance, held));
  }

  /** The payout result (callback and status response) of a local payout or IMT request. */
  function expectPayoutResult(result: Record<string, any>, body: Record<string, unknown>, status: number) {
    const bank = body.destination_type === 'BANK';
    expect(result).toEqual({
      payout_reference: body.payout_reference,
      destination: expect.any(String),
      data: expect.any(Object),
    });
    if (bank) expect(result.destination).toBe('bank_account');
    else expect(result.destination).not.toBe('bank_account');
    expect(result.data).toEqual(
      expect.objectContaining({
        payment_id: expect.anything(),
        wallet_account_number: merchant.settlementAccountNumber,
        transaction_cost: PAYOUT_FEE,
        wallet_balance: expect.stringMatching(FOUR_DECIMALS),
        payment_status: status,
        amount: dec(body.sender_amount as string),
        currency: 'KES',
        account_number: body.recipient_account_number,
        destination_name: body.destination_name,
        payout_description: body.payment_description,
        transaction_time: expect.stringMatching(ISO),
        result_description: expect.stringMatching(/\S/),
        recipient_first_name: body.recipient_first_name,
        recipient_last_name: body.recipient_last_name,
        recipient_phone_number: body.recipient_phone_number,
        message: expect.stringMatching(/\S/),
      }),
    );
    // The rail's reference: known once the rail has paid; before (or on failure) it may still be null.
    if (status === 700) expect(result.data.reference).toEqual(expect.stringMatching(/\S/));
    else expect(result.data).toHaveProperty('reference');
    expect(result.data).toHaveProperty('recipient_middle_name');
    if (body.recipient_middle_name !== undefined) expect(result.data.recipient_middle_name).toBe(body.recipient_middle_name);
    if (bank) expect(result.data.bank_code).toBe(body.recipient_bank_code);
    else expect(result.data.bank_code).toBeUndefined();
  }

  /** Sends a request, checks the 720 acknowledgement, follows it to the row's status; checks result, callbacks and money. */
  async function runRow(path: string, body: Record<string, unknown>, row: SandboxRow, send = (p: string) => gw().post(p)) {
    const reference = body.payout_reference as string;
    const url = receiver.url();
    body.callback_url = url;
    const before = await floatBalance(app, merchant);
    const res = await send(path).send(body);
    expectPayoutAnswer(res, 720, reference);
    expect(res.body).toEqual({
      payout_reference: reference,
      response_code: 720,
      response_description: expect.any(String),
    });

    const status = SANDBOX_STATUS[row];
    const result = await waitForPayoutStatus(app, merchant, reference, status);
    expectPayoutResult(result, body, status);

    if (status === 700 || status === 701) {
      const [callback] = await receivedAt(url);
      expectSignedCallback(callback, merchant, payoutsBasic);
      expectPayoutResult(callback.body, body, status);
      // The status query tells the callback's story (the balance it quotes may have moved on since).
      const { wallet_balance: _cb, ...callbackData } = callback.body.data as Record<string, unknown>;
      const { wallet_balance: _st, ...statusData } = result.data;
      expect(statusData).toEqual(callbackData);
    } else {
      // Not final: once the rail's answer is applied it stays where it is, and nobody is told anything.
      await waitForRailAnswer(app, merchant, reference);
      expect((await gw().get(statusPath(reference)).expect(200)).body.data.payment_status).toBe(status);
      expect((await callbackLog(app, merchant, reference)).deliveries).toEqual([]);
      expect(receiver.at(url)).toHaveLength(0);
      expect(forPayout(payoutsUrl, reference)).toHaveLength(0);
    }
    expect(await floatBalance(app, merchant)).toEqual(floatAfter(before, body.sender_amount as string, status));
    if (status === 700 || status === 701) await toldOnce(reference);
    expect(receiver.at(url)).toHaveLength(status === 700 || status === 701 ? 1 : 0);
    return { reference, url, result };
  }

  describe.each([
    ['MOBILE (decided by recipient_phone_number)', mobilePayoutBody],
    ['BANK (decided by recipient_account_number)', bankPayoutBody],
  ])('local payout, %s', (_name, bodyFor) => {
    it.each(ROWS.map((row) => [row, SANDBOX_STATUS[row]]))('sandbox row %s → %d', async (row) => {
      await runRow(
        PAYOUT_PATHS.local,
        bodyFor(merchant, row as SandboxRow, {
          sender_amount: '123.4567',
          recipient_amount: '123.4567',
        }),
        row as SandboxRow,
      );
    });
  });

  describe('international transfer (Authorization: Bearer, as the document shows)', () => {
    const bearer = (path: string) => request(app.getHttpServer()).post(path).set('authorization', `Bearer ${merchant.token}`);
    const stayPending = {
      recipient_phone_number: SANDBOX.mobile.pending,
      recipient_account_number: SANDBOX.mobile.pending,
    };

    it.each(ROWS.map((row) => [row, SANDBOX_STATUS[row]]))('MOBILE sandbox row %s → %d', async (row) => {
      const number = SANDBOX.mobile[row as SandboxRow];
      await runRow(
        PAYOUT_PATHS.imt,
        imtBody(merchant, {
          recipient_phone_number: number,
          recipient_account_number: number,
        }),
        row as SandboxRow,
        bearer,
      );
    });

    it.each([
      ['failed', 701],
      ['jammed', 704],
      ['ok', 700],
    ])('BANK sandbox row %s → %d (decided by recipient_account_number)', async (row) => {
      const body = imtBody(merchant, {
        destination_type: 'BANK',
        destination_name: 'BANK_KEN',
        recipient_bank_code: 'KCB01',
        recipient_account_number: SANDBOX.account[row as SandboxRow],
      });
      await runRow(PAYOUT_PATHS.imt, body, row as SandboxRow, bearer);
    });

    it('every optional KYC field given: accepted, settled, names echoed in the result', async () => {
      const body = imtBody(merchant, {
        sender_middle_name: 'Atieno',
        sender_document_type: 'PASSPORT',
        sender_document_number: 'A1234567',
        sender_phone_number: '254722000111',
        sender_type: 'COMPANY',
        recipient_type: 'COMPANY',
        recipient_middle_name: 'Q',
        recipient_document_type: 'NATIONAL_ID',
        recipient_document_number: '99887766',
      });
      const { result } = await runRow(PAYOUT_PATHS.imt, body, 'ok', bearer);
      expect(result.data.recipient_middle_name).toBe('Q');
    });

    it.each([
      ['exact', '1000', '0.0077', '7.70'],
      ['0.005 above', '1000', '0.0077', '7.705'],
      ['0.01 below (the edge of "within 0.01")', '1000', '0.0077', '7.69'],
      ['0.01 above', '1000', '0.0077', '7.71'],
      ['a 4-decimal amount', '123.4567', '0.0077', '0.9506'],
      ['a rate above 1', '100', '28.4321', '2843.21'],
    ])('recipient_amount = sender_amount × exchange_rate within 0.01 (%s) → 720', async (_case, sender, rate, recipient) => {
      // To a number that stays pending: a later settlement must not move the float under another test's comparison.
      const body = imtBody(merchant, {
        sender_amount: sender,
        exchange_rate: rate,
        recipient_amount: recipient,
        ...stayPending,
      });
      const res = await bearer(PAYOUT_PATHS.imt).send(body);
      expectPayoutAnswer(res, 720, body.payout_reference as string);
    });

    it.each([
      ['0.0101 above', '1000', '0.0077', '7.7101'],
      ['0.02 below', '1000', '0.0077', '7.68'],
      ['the rate inverted', '1000', '0.0077', '129870.13'],
      ['the sender amount copied', '1000', '0.0077', '1000'],
    ])('recipient_amount off by more than 0.01 (%s) → 721, nothing reserved', async (_case, sender, rate, recipient) => {
      const before = await floatBalance(app, merchant);
      const body = imtBody(merchant, {
        sender_amount: sender,
        exchange_rate: rate,
        recipient_amount: recipient,
      });
      const res = await bearer(PAYOUT_PATHS.imt).send(body);
      expectPayoutAnswer(res, 721, body.payout_reference as string);
      expect(await floatBalance(app, merchant)).toEqual(before);
      expectPayoutAnswer(await gw().get(statusPath(body.payout_reference as string)), 723);
    });

    it('a callback_url at the metadata address → 721 VALIDATION_FAILED naming callback_url, nothing stored or reserved', async () => {
      const before = await floatBalance(app, merchant);
      for (const [path, body] of [
        [
          PAYOUT_PATHS.local,
          mobilePayoutBody(merchant, 'ok', {
            callback_url: 'https://169.254.169.254/',
          }),
        ],
        [
          PAYOUT_PATHS.b2b,
          b2bBody(merchant, {
            callback_url: 'https://169.254.169.254/latest/meta-data/',
          }),
        ],
      ] as const) {
        const res = await gw().post(path).send(body);
        expectPayoutAnswer(res, 721, body.payout_reference as string, 'VALIDATION_FAILED');
        expect(res.body.response_description).toMatch(/callback_url must not point to a link-local or metadata address/);
        expect(await payoutRow(app, merchant.clientId, body.payout_reference as string)).toBeUndefined();
      }
      // Available float unchanged (earlier payouts may still settle their holds meanwhile, moving only reserved).
      expect((await floatBalance(app, merchant)).balance).toBe(before.balance);
    });

    it('x-access-token works on the IMT route too, and local payouts accept Authorization: Bearer', async () => {
      const imt = imtBody(merchant, stayPending);
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.imt).send(imt), 720, imt.payout_reference as string);
      const local = mobilePayoutBody(merchant, 'pending');
      expectPayoutAnswer(await bearer(PAYOUT_PATHS.local).send(local), 720, local.payout_reference as string);
    });
  });

  describe('callbacks', () => {
    it('a local payout result goes to callback_url and to the client’s payouts URL, both signed, the latter with its own Basic credentials', async () => {
      const body = mobilePayoutBody(merchant, 'ok', {
        callback_url: receiver.url(),
      });
      const reference = body.payout_reference as string;
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      const [direct] = await receivedAt(body.callback_url as string);
      const [notified] = await waitFor('the payouts-kind callback', () => {
        const got = forPayout(payoutsUrl, reference);
        return got.length > 0 ? got : undefined;
      });
      expectSignedCallback(direct, merchant, payoutsBasic);
      expectSignedCallback(notified, merchant, payoutsBasic);
      expect(notified.body).toEqual(direct.body);
      expectPayoutResult(notified.body, body, 700);
      const { deliveries } = await finishedCallbackLog(app, merchant, reference, 2);
      expect(deliveries.map((d) => [d.url, d.status, d.attempts]).sort()).toEqual(
        [
          [body.callback_url, 'DELIVERED', 1],
          [payoutsUrl, 'DELIVERED', 1],
        ].sort(),
      );
      expect(receiver.at(body.callback_url as string)).toHaveLength(1);
      expect(forPayout(payoutsUrl, reference)).toHaveLength(1);
    });

    it('a failed payout (701) is told to both addresses too', async () => {
      const body = bankPayoutBody(merchant, 'failed', {
        callback_url: receiver.url(),
      });
      const reference = body.payout_reference as string;
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      const [direct] = await receivedAt(body.callback_url as string);
      expect(direct.body.data).toMatchObject({ payment_status: 701 });
      await waitFor('the payouts-kind callback', () => forPayout(payoutsUrl, reference).length === 1);
      expectSignedCallback(forPayout(payoutsUrl, reference)[0], merchant, payoutsBasic);
    });

    it('a callback_url on another origin than the registered payouts URL is signed but gets no Basic credentials', async () => {
      const elsewhere = await new MerchantReceiver().start();
      try {
        const body = mobilePayoutBody(merchant, 'ok', {
          callback_url: elsewhere.url(),
        });
        expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, body.payout_reference as string);
        const [callback] = await waitFor('the callback elsewhere', () => (elsewhere.received.length > 0 ? elsewhere.received : undefined));
        expectSignedCallback(callback, merchant, null);
        expectPayoutResult(callback.body, body, 700);
      } finally {
        await elsewhere.close();
      }
    });

    it('an unacknowledged callback is retried under one X-Event-Id with the same bytes until a 2xx', async () => {
      const url = receiver.url();
      receiver.failFor(url, 2);
      const body = mobilePayoutBody(merchant, 'ok', { callback_url: url });
      const reference = body.payout_reference as string;
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      const calls = await receivedAt(url, 3);
      expect(new Set(calls.map((c) => c.headers['x-event-id'])).size).toBe(1);
      expect(new Set(calls.map((c) => c.rawBody)).size).toBe(1);
      for (const call of calls) expectSignedCallback(call, merchant, payoutsBasic);
      // Acknowledged at the third attempt, the delivery is final: no fourth call comes.
      const { deliveries } = await finishedCallbackLog(app, merchant, reference, 2);
      expect(deliveries.find((d) => d.url === url)).toMatchObject({ status: 'DELIVERED', attempts: 3 });
      expect(receiver.at(url)).toHaveLength(3);
    });
  });

  describe('SMS notification to the recipient', () => {
    /** The records of GET /v1/notifications?reference=, whether answered as an array or wrapped in an object. */
    async function notifications(m: GatewayMerchant, reference: string): Promise<Array<Record<string, any>>> {
      const res = await gateway(app, m.token).get(`/v1/notifications?reference=${encodeURIComponent(reference)}`);
      if (res.status === 404) return [];
      expect(res.status).toBe(200);
      const list = Array.isArray(res.body) ? res.body : (res.body.notifications ?? res.body.data);
      expect(Array.isArray(list)).toBe(true);
      return list;
    }

    it('after a successful local payout the recipient’s SMS is recorded and readable by the merchant only', async () => {
      const body = mobilePayoutBody(merchant, 'ok', {
        sender_amount: '2500.50',
        recipient_amount: '2500.50',
      });
      const reference = body.payout_reference as string;
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      await waitForPayoutStatus(app, merchant, reference, 700);
      const [sms] = await waitFor('the SMS record', async () => {
        const list = await notifications(merchant, reference);
        return list.length > 0 ? list : undefined;
      });
      expect(JSON.stringify(sms)).toContain(SANDBOX.mobile.ok.slice(-4));
      expect(sms).toEqual(expect.objectContaining({ channel: 'SMS' }));
      // In the currency's minor units with thousands separators, as the portal and statements print amounts.
      expect(String(sms.message)).toContain(`you have received ${body.source_currency} 2,500.50 from`);
      expect(await notifications(merchant, reference)).toHaveLength(1);

      const other = await createPayoutMerchant(app, { float: '0' });
      expect(await notifications(other, reference)).toEqual([]);
    });

    it('a failed payout sends no success SMS', async () => {
      const body = mobilePayoutBody(merchant, 'failed');
      const reference = body.payout_reference as string;
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      await waitForPayoutStatus(app, merchant, reference, 701);
      // An SMS would be queued with the status, so none is still to come.
      expect(await notifications(merchant, reference)).toEqual([]);
    });
  });

  describe('duplicates (722) and unknown references (723)', () => {
    it('a reused payout_reference is 722 DUPLICATE_IGNORED on local, IMT and B2B routes; money moves once', async () => {
      const body = mobilePayoutBody(merchant, 'pending', {
        sender_amount: '77.0000',
        recipient_amount: '77.0000',
      });
      const reference = body.payout_reference as string;
      const before = await floatBalance(app, merchant);
      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, reference);
      const afterFirst = await floatBalance(app, merchant);
      expect(afterFirst).toEqual(expectedFloat(minus(before.balance, '87'), plus(before.reserved_balance, '87')));

      expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 722, reference, 'DUPLICATE_IGNORED');
      expectPayoutAnswer(
        await gw()
          .post(PAYOUT_PATHS.local)
          .send({ ...body, sender_amount: '5', recipient_amount: '5' }),
        722,
        reference,
        'DUPLICATE_IGNORED',
      );
      expectPayoutAnswer(
        await gw()
          .post(PAYOUT_PATHS.imt)
          .send(imtBody(merchant, { payout_reference: reference })),
        722,
        reference,
        'DUPLICATE_IGNORED',
      );
      expectPayoutAnswer(
        await gw()
          .post(PAYOUT_PATHS.b2b)
          .send(b2bBody(merchant, { payout_reference: reference })),
        722,
        reference,
        'DUPLICATE_IGNORED',
      );
      expect(await floatBalance(app, merchant)).toEqual(afterFirst);
      const row = await payoutRow(app, merchant.clientId, reference);
      expect(row).toMatchObject({ kind: 'LOCAL' });
      expect(new Decimal(row!.amount).toFixed(4)).toBe('77.0000');
    });

    it('a status query of an unknown reference → 404 with response_code 723', async () => {
      const reference = `never-${randomUUID()}`;
      const res = await gw().get(statusPath(reference));
      expectPayoutAnswer(res, 723);
      expect(res.body.payout_reference ?? reference).toBe(reference);
    });

    it('a status query without a token → 401', async () => {
      expect((await request(app.getHttpServer()).get(statusPath('whatever'))).status).toBe(401);
    });
  });

  it('the acknowledgement comes before the rail: right after 720 the payout reads 703 and its money is reserved', async () => {
    const body = mobilePayoutBody(merchant, 'ok', {
      sender_amount: '10',
      recipient_amount: '10',
    });
    const before = await floatBalance(app, merchant);
    // The worker stops claiming, so the read after 720 comes before the rail whatever the scheduling.
    const startClaiming = await stopClaiming(app);
    expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, body.payout_reference as string);
    const early = await gw().get(statusPath(body.payout_reference as string));
    expect(early.status).toBe(200);
    expect(early.body.data.payment_status).toBe(703);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(minus(before.balance, '20'), plus(before.reserved_balance, '20')));
    startClaiming();
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700);
  });
});
