import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import request from 'supertest';
import { ClientServicesService } from '../../src/client-services/client-services.service';
import { checkoutBody, entryCount, initiateCheckout, minus, plus, waitForCheckout } from '../support/collections-fixtures';
import {
  chargeBody,
  CLI_JS,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  ledgerBalance,
  MerchantReceiver,
  paymentCount,
  startIsolatedSandbox,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';
import { createWallet } from '../support/wallet-fixtures';

const run = promisify(execFile);
const SETTLE_DELAY_MS = 150;

/**
 * Split settlements (collection document §2–§3, provider contract §5 "Split settlements", §10 "Collections
 * money"): shares of a payment for partner wallets of the same client, validated when the charge or checkout is
 * accepted and paid out of the settlement wallet in one ledger entry when the merchant confirms the payment with
 * POST /transactions/acknowledge status SUCCESSFUL; FAILED distributes nothing; a confirmation is accepted once.
 */
describe('split settlements', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  let partnerA: string;
  let partnerB: string;
  let usdWallet: string;
  let suspendedWallet: string;
  let foreignWallet: string;
  let deactivatedProfileWallet: string;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS), CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
    partnerA = (await createWallet(app, merchant.tenant, { account_name: 'Partner A' })).account_number;
    partnerB = (await createWallet(app, merchant.tenant, { account_name: 'Partner B' })).account_number;
    usdWallet = (await createWallet(app, merchant.tenant, { account_name: 'Dollar partner', currency: 'USD' })).account_number;
    suspendedWallet = (await createWallet(app, merchant.tenant, { account_name: 'Suspended partner', status: 'SUSPENDED' })).account_number;
    foreignWallet = (await createWallet(app, other.tenant, { account_name: 'Someone else' })).account_number;
    const deactivated = await createWallet(app, merchant.tenant, { account_name: 'Partner whose profile left' });
    deactivatedProfileWallet = deactivated.account_number;
    await request(app.getHttpServer())
      .post(`/api/v1/profiles/client-profile-id/${deactivated.client_profile_id}?command=DEACTIVATE`)
      .set('authorization', merchant.tenant.auth)
      .expect(200);
  });
  afterAll(async () => sandbox?.close());

  const gw = (m: GatewayMerchant = merchant) => gateway(app, m.token);
  const acknowledge = (body: Record<string, unknown>, m: GatewayMerchant = merchant) => gw(m).post('/transactions/acknowledge').send(body);
  const balances = async () => ({
    a: await ledgerBalance(app, partnerA),
    b: await ledgerBalance(app, partnerB),
    settlement: await ledgerBalance(app, merchant.settlementAccountNumber),
    entries: await entryCount(app, merchant.clientId),
  });

  /** A successful charge of `amount` carrying the splits; resolves once the payment reads 700. */
  async function paidCharge(amount: string, splits: unknown[], m: GatewayMerchant = merchant, overrides: Record<string, unknown> = {}) {
    const body = chargeBody(m, {
      amount,
      callback_url: receiver.url(),
      extra_data: { order: 'S-1', split_settlements: splits },
      ...overrides,
    });
    const res = await gw(m).post('/v1/mobile-money/charge').send(body);
    expect(res.status).toBe(200);
    const result = await waitForPaymentStatus(app, m, res.body.charge_request_id, 700);
    expect(result.payment_id).toBe(String(res.body.charge_request_id));
    return { paymentId: result.payment_id as string, reference: body.external_reference as string };
  }

  function expectValidationFailure(res: request.Response, mention: RegExp) {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status_code: 172, status_description: 'Validation Failed', message: expect.any(String) });
    expect(res.body.message).toMatch(mention);
  }

  describe('validation at acceptance', () => {
    const cases: Array<[string, () => unknown[], RegExp]> = [
      ['an unknown partner account', () => [{ account: 'W999999999', amount: 10, reason: 'x' }], /W999999999.*does not exist/],
      ["another client's wallet", () => [{ account: foreignWallet, amount: 10, reason: 'x' }], /does not exist/],
      ['an inactive (suspended) partner wallet', () => [{ account: suspendedWallet, amount: 10, reason: 'x' }], /not active/],
      [
        'a partner wallet whose profile is deactivated',
        () => [{ account: deactivatedProfileWallet, amount: 10, reason: 'x' }],
        /not active/,
      ],
      ['a partner wallet in another currency', () => [{ account: usdWallet, amount: 10, reason: 'x' }], /not a KES wallet/],
      ['a zero amount', () => [{ account: partnerA, amount: 0, reason: 'x' }], /amount/],
      ['a negative amount', () => [{ account: partnerA, amount: '-5', reason: 'x' }], /amount/],
      ['more than 4 decimals', () => [{ account: partnerA, amount: '1.00001', reason: 'x' }], /amount/],
      [
        'shares adding up to more than the amount',
        () => [
          { account: partnerA, amount: '60', reason: 'x' },
          { account: partnerB, amount: '40.0001', reason: 'y' },
        ],
        /exceeds the amount/,
      ],
      [
        'a partner named twice',
        () => [
          { account: partnerA, amount: 1, reason: 'x' },
          { account: partnerA, amount: 2, reason: 'y' },
        ],
        /more than once/,
      ],
      ['an empty list', () => [], /split_settlements/],
    ];

    it.each(cases)('a charge naming %s is refused with 400 172 and nothing is stored', async (_what, splits, mention) => {
      const before = await paymentCount(app, merchant.clientId);
      const body = chargeBody(merchant, { amount: '100', extra_data: { split_settlements: splits() } });
      const res = await gw().post('/v1/mobile-money/charge').send(body);
      expectValidationFailure(res, mention);
      expect(await paymentCount(app, merchant.clientId)).toBe(before);
    });

    it('a checkout with invalid splits is refused the same way and opens no session', async () => {
      const body = checkoutBody(merchant, receiver, {
        amount: 100,
        extra_data: { split_settlements: [{ account: foreignWallet, amount: 10, reason: 'x' }] },
      });
      expectValidationFailure(await gw().post('/v2/checkout/initiate').send(body), /does not exist/);
      expect((await gw().get(`/v2/checkout/status/${body.merchant_transaction_id}`)).status).toBe(404);
      const over = checkoutBody(merchant, receiver, {
        amount: 100,
        extra_data: { split_settlements: [{ account: partnerA, amount: 101, reason: 'x' }] },
      });
      expectValidationFailure(await gw().post('/v2/checkout/initiate').send(over), /exceeds the amount/);
    });

    it('a mandatory partner configured with the CLI (service:partner-add) must be in every split-settled request of the service', async () => {
      expect(existsSync(CLI_JS)).toBe(true);
      const created = await request(app.getHttpServer())
        .post('/api/v1/client-services')
        .set('authorization', merchant.tenant.auth)
        .send({
          client_code: merchant.clientCode,
          client_service_name: 'Marketplace',
          service_code: 'CUSTOM_SERVICE',
          has_transaction_fee: true,
          transaction_fee_type: 'FIXED',
          transaction_fee: 10,
          minimum_transaction_amount: 1,
          maximum_transaction_amount: 1_000_000,
          is_active: 1,
        })
        .expect(201);
      const serviceCode = created.body.client_service_code as string;
      const settlement = await createWallet(app, merchant.tenant, { account_name: 'Marketplace settlement' });
      await app
        .get(ClientServicesService)
        .setSettlementWallet(dataSource(app).manager, merchant.clientId, serviceCode, settlement.account_id);

      const { stdout } = await run(
        process.execPath,
        [CLI_JS, 'service:partner-add', '--service', serviceCode, '--account', partnerB, '--json'],
        {
          env: { ...process.env, DATABASE_URL: sandbox.db.url, REDIS_URL: sandbox.redis.url, LOG_LEVEL: 'silent' },
          timeout: 30_000,
        },
      );
      expect(JSON.parse(stdout)).toEqual({ service_code: serviceCode, mandatory_partner_accounts: [partnerB] });

      const withoutSplits = await gw()
        .post('/v1/mobile-money/charge')
        .send(chargeBody(merchant, { service_code: serviceCode, extra_data: {} }));
      expectValidationFailure(withoutSplits, new RegExp(`mandatory partner accounts: ${partnerB}`));
      const missingB = await gw()
        .post('/v1/mobile-money/charge')
        .send(
          chargeBody(merchant, {
            service_code: serviceCode,
            extra_data: { split_settlements: [{ account: partnerA, amount: 5, reason: 'x' }] },
          }),
        );
      expectValidationFailure(missingB, new RegExp(partnerB));
      const checkout = await gw()
        .post('/v2/checkout/initiate')
        .send(checkoutBody(merchant, receiver, { service_code: serviceCode, amount: 100 }));
      expectValidationFailure(checkout, new RegExp(partnerB));

      const withB = await gw()
        .post('/v1/mobile-money/charge')
        .send(
          chargeBody(merchant, {
            service_code: serviceCode,
            extra_data: { split_settlements: [{ account: partnerB, amount: 5, reason: 'platform fee' }] },
          }),
        );
      expect(withB.status).toBe(200);
      // Other services of the client are not affected.
      const unaffected = await gw()
        .post('/v1/mobile-money/charge')
        .send(chargeBody(merchant, { extra_data: {} }));
      expect(unaffected.status).toBe(200);
      // Both settle before the next test reads the client's wallets and entries.
      for (const accepted of [withB, unaffected]) await waitForPaymentStatus(app, merchant, accepted.body.charge_request_id, 700);
    });
  });

  describe('distribution on confirmation', () => {
    it('SUCCESSFUL pays each partner exactly its share in one journal entry, out of the settlement wallet; a second confirmation is a 409', async () => {
      const { paymentId } = await paidCharge('100', [
        { account: partnerA, amount: '33.3333', reason: 'commission' },
        { account: partnerB, amount: 16.6667, reason: 'delivery' },
      ]);
      const before = await balances();

      const res = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'Order S-1 delivered' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ payment_id: paymentId, message: 'Split settlements distributed to 2 partner account(s)' });

      const after = await balances();
      expect(after.a).toBe(plus(before.a, '33.3333'));
      expect(after.b).toBe(plus(before.b, '16.6667'));
      expect(after.settlement).toBe(minus(before.settlement, '50'));
      expect(after.entries).toBe(before.entries + 1);
      const [entry] = await dataSource(app).query(
        `SELECT e.id, count(p.*)::int AS postings, sum(p.amount) AS total FROM journal_entries e JOIN postings p ON p.client_id = e.client_id AND p.entry_id = e.id
         WHERE e.client_id = $2 AND e.id = (SELECT split_entry_id FROM payments WHERE client_id = $2 AND id = $1) GROUP BY e.id`,
        [paymentId, merchant.clientId],
      );
      expect(entry).toBeDefined();
      expect(entry.total).toMatch(/^0(\.0+)?$/); // the decimal as Postgres prints it, never through a float

      const again = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'again' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ status_code: 172, status_description: 'Validation Failed', message: 'Payment already acknowledged' });
      const failedLater = await acknowledge({ payment_id: paymentId, status: 'FAILED', narration: 'changed my mind' });
      expect(failedLater.status).toBe(409);
      expect(await balances()).toEqual(after);
    });

    it('FAILED distributes nothing, and the confirmation cannot be turned into SUCCESSFUL afterwards', async () => {
      const { paymentId } = await paidCharge('200', [{ account: partnerA, amount: '120', reason: 'commission' }]);
      const before = await balances();
      const res = await acknowledge({ payment_id: paymentId, status: 'FAILED', narration: 'order cancelled' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ payment_id: paymentId, message: 'Payment acknowledged; split settlements were not distributed' });
      expect(await balances()).toEqual(before);
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'retry' })).status).toBe(409);
      expect(await balances()).toEqual(before);
    });

    it("acknowledging another client's payment is a 404 (status_code 120) and moves nothing", async () => {
      const { paymentId } = await paidCharge('100', [{ account: partnerA, amount: '10', reason: 'x' }]);
      const before = await balances();
      const res = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'not mine' }, other);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status_code: 120 });
      expect(await balances()).toEqual(before);
      // The owner can still confirm it.
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'mine' })).status).toBe(200);
      expect(await ledgerBalance(app, partnerA)).toBe(plus(before.a, '10'));
    });

    it('refuses malformed confirmations and a payment that has not succeeded, with 400 172', async () => {
      for (const body of [{}, { payment_id: '1', status: 'MAYBE' }, { payment_id: 'abc', status: 'SUCCESSFUL' }]) {
        const res = await acknowledge(body);
        expect(res.status).toBe(400);
        expect(res.body.status_code).toBe(172);
      }
      const pending = await gw()
        .post('/v1/mobile-money/charge')
        .send(
          chargeBody(merchant, {
            payer_msisdn: '254700000002',
            extra_data: { split_settlements: [{ account: partnerA, amount: 5, reason: 'x' }] },
          }),
        );
      expect(pending.status).toBe(200);
      const before = await balances();
      const res = await acknowledge({ payment_id: String(pending.body.charge_request_id), status: 'SUCCESSFUL', narration: 'too early' });
      expect(res.status).toBe(400);
      expect(res.body.status_code).toBe(172);
      expect(await balances()).toEqual(before);
    });

    it('a partner wallet suspended after acceptance is not credited: the confirmation is refused and can be repeated once it is active again', async () => {
      const late = (await createWallet(app, merchant.tenant, { account_name: 'Late partner' })).account_number;
      const { paymentId } = await paidCharge('100', [
        { account: late, amount: '30', reason: 'commission' },
        { account: partnerB, amount: '20', reason: 'delivery' },
      ]);
      const suspend = await request(app.getHttpServer())
        .post(`/api/v1/accounts/account-number/${late}?command=SUSPEND`)
        .set('authorization', merchant.tenant.auth);
      expect(suspend.status).toBe(200);
      const before = await balances();
      const refused = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        status_code: 172,
        status_description: 'Validation Failed',
        message: `split_settlements partner account ${late} is SUSPENDED and cannot receive the split settlements`,
      });
      expect(await ledgerBalance(app, late)).toBe('0.0000');
      expect(await balances()).toEqual(before);

      await request(app.getHttpServer())
        .post(`/api/v1/accounts/account-number/${late}?command=ACTIVATE`)
        .set('authorization', merchant.tenant.auth)
        .expect(200);
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' })).status).toBe(200);
      expect(await ledgerBalance(app, late)).toBe('30.0000');
      expect(await ledgerBalance(app, partnerB)).toBe(plus(before.b, '20'));
    });

    it('a settlement wallet suspended after acceptance cannot pay: 400 naming it; a payment without shares is acknowledged all the same', async () => {
      const fresh = await createGatewayMerchant(app);
      const partner = (await createWallet(app, fresh.tenant, { account_name: 'Partner of a suspended wallet' })).account_number;
      const { paymentId } = await paidCharge('100', [{ account: partner, amount: '10', reason: 'commission' }], fresh);
      const { paymentId: withoutShares } = await paidCharge('100', [], fresh, { extra_data: {} });
      const command = (verb: string) =>
        request(app.getHttpServer())
          .post(`/api/v1/accounts/account-number/${fresh.settlementAccountNumber}?command=${verb}`)
          .set('authorization', fresh.tenant.auth)
          .expect(200);
      await command('SUSPEND');
      const refused = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' }, fresh);
      expectValidationFailure(
        refused,
        new RegExp(`^Settlement wallet ${fresh.settlementAccountNumber} is SUSPENDED and cannot pay the split settlements$`),
      );
      expect(await ledgerBalance(app, partner)).toBe('0.0000');
      const plain = await acknowledge({ payment_id: withoutShares, status: 'SUCCESSFUL', narration: 'deliver' }, fresh);
      expect(plain.body).toEqual({ payment_id: withoutShares, message: 'Payment acknowledged; it has no split settlements' });
      await command('ACTIVATE');
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' }, fresh)).status).toBe(200);
      expect(await ledgerBalance(app, partner)).toBe('10.0000');
    });
  });

  describe('through hosted checkout', () => {
    it('a settlement wallet short of the shares refuses with 400 and moves nothing; the confirmation succeeds once it is covered', async () => {
      const fresh = await createGatewayMerchant(app);
      const partner = (await createWallet(app, fresh.tenant, { account_name: 'Fresh partner' })).account_number;
      // 100 collected, 90 reach the settlement wallet after the fee of 10: shares of 95 are not covered.
      const { paymentId } = await paidCharge('100', [{ account: partner, amount: '95', reason: 'commission' }], fresh);
      const refused = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' }, fresh);
      expectValidationFailure(refused, /^Insufficient balance in the settlement wallet to distribute the split settlements$/);
      expect(await ledgerBalance(app, partner)).toBe('0.0000');
      expect(await ledgerBalance(app, fresh.settlementAccountNumber)).toBe('90.0000');

      await paidCharge('100', [], fresh, { extra_data: {} });
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' }, fresh)).status).toBe(200);
      expect(await ledgerBalance(app, partner)).toBe('95.0000');
      expect(await ledgerBalance(app, fresh.settlementAccountNumber)).toBe('85.0000');
    });

    it('a partner whose profile was deactivated after acceptance is not credited: 400 naming it, nothing moves', async () => {
      const leaving = await createWallet(app, merchant.tenant, { account_name: 'Partner about to leave' });
      const { paymentId } = await paidCharge('100', [
        { account: partnerA, amount: '10', reason: 'commission' },
        { account: leaving.account_number, amount: '20', reason: 'delivery' },
      ]);
      await request(app.getHttpServer())
        .post(`/api/v1/profiles/client-profile-id/${leaving.client_profile_id}?command=DEACTIVATE`)
        .set('authorization', merchant.tenant.auth)
        .expect(200);
      const before = await balances();
      const refused = await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' });
      expectValidationFailure(
        refused,
        new RegExp(`^split_settlements partner account ${leaving.account_number} belongs to a deactivated profile$`),
      );
      expect(await balances()).toEqual(before);
      expect(await ledgerBalance(app, leaving.account_number)).toBe('0.0000');
    });

    it('ten confirmations of one payment at once distribute its shares once: one 200, nine 409', async () => {
      const { paymentId } = await paidCharge('100', [{ account: partnerB, amount: '40', reason: 'delivery' }]);
      const before = await balances();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'deliver' })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(409)]);
      const after = await balances();
      expect(after.b).toBe(plus(before.b, '40'));
      expect(after.settlement).toBe(minus(before.settlement, '40'));
      expect(after.entries).toBe(before.entries + 1);
    });

    it('a checkout paid in full carries its splits: confirming its payment distributes them', async () => {
      const { mtid, reference } = await initiateCheckout(app, merchant, receiver, {
        amount: 1000,
        extra_data: {
          split_settlements: [
            { account: partnerA, amount: 250, reason: 'commission' },
            { account: partnerB, amount: '0.0001', reason: 'tip' },
          ],
        },
      });
      await request(app.getHttpServer()).post(`/checkout/${reference}/pay`).send({ msisdn: '254712345678' }).expect(200);
      const paid = await waitForCheckout(app, merchant, mtid, 801);
      const paymentId = paid.payments[0].payment_id as string;
      expect(paid.payments[0].extra_data.split_settlements).toHaveLength(2);
      const before = await balances();
      expect((await acknowledge({ payment_id: paymentId, status: 'SUCCESSFUL', narration: 'done' })).status).toBe(200);
      const after = await balances();
      expect(after.a).toBe(plus(before.a, 250));
      expect(after.b).toBe(plus(before.b, '0.0001'));
      expect(after.settlement).toBe(minus(before.settlement, '250.0001'));
      expect(after.entries).toBe(before.entries + 1);
    });

    it('a checkout paid in two parts still distributes its splits when the payment completing it is confirmed', async () => {
      const { mtid, reference } = await initiateCheckout(app, merchant, receiver, {
        amount: 1000,
        extra_data: { split_settlements: [{ account: partnerA, amount: 300, reason: 'commission' }] },
      });
      const pay = (body: Record<string, unknown>) => request(app.getHttpServer()).post(`/checkout/${reference}/pay`).send(body).expect(200);
      await pay({ msisdn: '254712345678', amount: 400 });
      await waitForCheckout(app, merchant, mtid, 802);
      await pay({ msisdn: '254712345678' });
      const paid = await waitForCheckout(app, merchant, mtid, 801);
      const [first, last] = paid.payments.map((p: { payment_id: string }) => p.payment_id);
      const before = await balances();
      // The first part does not carry the shares (they are for the whole amount)...
      expect((await acknowledge({ payment_id: first, status: 'SUCCESSFUL', narration: 'part' })).status).toBe(200);
      expect(await balances()).toEqual(before);
      // ...the payment that completes the checkout does.
      expect((await acknowledge({ payment_id: last, status: 'SUCCESSFUL', narration: 'rest' })).status).toBe(200);
      const after = await balances();
      expect(after.a).toBe(plus(before.a, 300));
      expect(after.settlement).toBe(minus(before.settlement, 300));
    });
  });
});
