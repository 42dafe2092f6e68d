import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { checkoutBody, collectionsBed, CollectionsBed, initiateCheckout } from '../support/collections-fixtures';
import { chargeBody, createGatewayMerchant, gateway, GatewayMerchant, paymentCount } from '../support/gateway-fixtures';
import { createService } from '../support/money-fixtures';
import { dataSource } from '../support/test-app';
import { createWallet } from '../support/wallet-fixtures';

/**
 * The database refuses a charge or a checkout with a named refusal (collecting_service, collection_merchant_fee,
 * split_settlements_check, the caller's own check), and the gateway words each as the documented 4xx: the bodies,
 * to the letter, and the order in which the rules are checked. The merchant fee and the rule that it be below the
 * amount are collection_merchant_fee's, for charges and for a checkout's payments alike. The merchant's service
 * collects KES from 1 to 1,000,000 with a FIXED fee of 10.
 */
describe('collection refusals, worded', () => {
  let bed: CollectionsBed;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let noWallet: string;
  let partner: string;
  let dollars: string;
  let suspended: string;
  let mandatory: { merchant: GatewayMerchant; service: string; partners: string[] };

  beforeAll(async () => {
    bed = await collectionsBed();
    ({ app, merchant } = bed);
    noWallet = await createService(app, merchant.tenant, { client_service_name: 'No wallet yet' });
    partner = (await createWallet(app, merchant.tenant, { account_name: 'Partner' })).account_number;
    dollars = (await createWallet(app, merchant.tenant, { account_name: 'Dollars', currency: 'USD' })).account_number;
    suspended = (await createWallet(app, merchant.tenant, { account_name: 'Suspended', status: 'SUSPENDED' })).account_number;
    const market = await createGatewayMerchant(app);
    const partners = [
      (await createWallet(app, market.tenant, { account_name: 'Mandatory B' })).account_number,
      (await createWallet(app, market.tenant, { account_name: 'Mandatory A' })).account_number,
    ].sort();
    await dataSource(app).query(
      `INSERT INTO client_service_partners (client_id, client_service_id, account_id)
       SELECT s.client_id, s.id, a.id FROM client_services s JOIN ledger_accounts a ON a.client_id = s.client_id
       WHERE s.client_id = $1 AND s.code = $2 AND a.account_number = ANY($3)`,
      [market.clientId, market.serviceCode, partners],
    );
    mandatory = { merchant: market, service: market.serviceCode, partners };
  });
  afterAll(async () => bed?.sandbox.close());

  const validation = (message: string) => ({ status: 400, body: { status_code: 172, status_description: 'Validation Failed', message } });
  const splits = (...items: Array<[string, string]>) => ({ split_settlements: items.map(([account, amount]) => ({ account, amount })) });

  async function charge(overrides: Record<string, unknown>, m: GatewayMerchant = merchant) {
    const before = await paymentCount(app, m.clientId);
    const res = await gateway(app, m.token).post('/v1/mobile-money/charge').send(chargeBody(m, overrides));
    expect(await paymentCount(app, m.clientId)).toBe(before);
    return { status: res.status, body: res.body };
  }

  async function checkout(overrides: Record<string, unknown>, m: GatewayMerchant = merchant) {
    const res = await gateway(app, m.token)
      .post('/v2/checkout/initiate')
      .send(checkoutBody(m, bed.sandbox.receiver, overrides));
    return { status: res.status, body: res.body };
  }

  it('the client service: unknown, without a settlement wallet, the amount out of its bounds', async () => {
    for (const send of [charge, checkout]) {
      expect(await send({ service_code: 'NO-SUCH' })).toEqual(validation('Invalid service code NO-SUCH'));
      expect(await send({ service_code: noWallet })).toEqual(validation(`Service ${noWallet} has no settlement wallet configured`));
      expect(await send({ amount: 1_000_001 })).toEqual(validation('amount must be between 1.0000 and 1000000.0000'));
    }
  });

  it("a charge in another currency than the service's: 115", async () => {
    expect(await charge({ currency_code: 'UGX' })).toEqual({
      status: 400,
      body: { status_code: 115, status_description: 'Invalid currency code', message: `Service ${merchant.serviceCode} collects in KES` },
    });
  });

  it('split partners: unknown, not active, in another currency, more than the amount, the mandatory ones missing', async () => {
    for (const send of [charge, checkout]) {
      expect(await send({ amount: 100, extra_data: splits(['W999999999', '1']) })).toEqual(
        validation('split_settlements partner account W999999999 does not exist'),
      );
      expect(await send({ amount: 100, extra_data: splits([suspended, '1']) })).toEqual(
        validation(`split_settlements partner account ${suspended} is not active`),
      );
      expect(await send({ amount: 100, extra_data: splits([dollars, '1']) })).toEqual(
        validation(`split_settlements partner account ${dollars} is not a KES wallet`),
      );
      expect(await send({ amount: 100, extra_data: splits([partner, '100.0001']) })).toEqual(
        validation('split_settlements total 100.0001 exceeds the amount 100.0000'),
      );
      const missing = validation(
        `split_settlements must include the service's mandatory partner accounts: ${mandatory.partners.join(', ')}`,
      );
      expect(await send({ service_code: mandatory.service }, mandatory.merchant)).toEqual(missing);
      expect(await send({ service_code: mandatory.service, extra_data: splits() }, mandatory.merchant)).toEqual(
        validation('split_settlements must be an array of 1 to 50 items'),
      );
      expect(
        await send({ service_code: mandatory.service, amount: 100, extra_data: splits([mandatory.partners[0], '1']) }, mandatory.merchant),
      ).toEqual(validation(`split_settlements must include the service's mandatory partner accounts: ${mandatory.partners[1]}`));
    }
  });

  const merchantFeeOf = async (id: string | number) =>
    (await dataSource(app).query(`SELECT merchant_fee::text AS fee FROM payments WHERE id = $1`, [id]))[0].fee;

  it('a charge no larger than the merchant fee; a larger one carries it, one whose payer pays the charge bears none', async () => {
    expect(await charge({ amount: '10' })).toEqual(validation('amount must be greater than the service fee of 10.0000'));
    const accepted = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { amount: '10.01' }));
    expect(accepted.status).toBe(200);
    expect(await merchantFeeOf(accepted.body.charge_request_id)).toBe('10.0000');
    const payerPays = await gateway(app, merchant.token)
      .post('/v1/mobile-money/charge')
      .send(chargeBody(merchant, { amount: '10', add_transaction_charge: true, transaction_charge: '2' }));
    expect(payerPays.status).toBe(200);
    expect(await merchantFeeOf(payerPays.body.charge_request_id)).toBe('0.0000');
  });

  it('a checkout payment no larger than the merchant fee is refused (400) and starts nothing; a larger one carries it', async () => {
    const { reference } = await initiateCheckout(app, merchant, bed.sandbox.receiver, { amount: 100 });
    const pay = (amount: number) =>
      request(app.getHttpServer()).post(`/checkout/${reference}/pay`).send({ msisdn: '254712345678', amount });
    const refused = await pay(10);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Amount must be greater than the fee of 10.0000');
    const [session] = await dataSource(app).query(
      `SELECT cs.id, cs.status, (SELECT count(*)::int FROM payments p WHERE p.client_id = cs.client_id AND p.checkout_session_id = cs.id) AS payments
       FROM checkout_sessions cs WHERE cs.checkout_reference = $1`,
      [reference],
    );
    expect(session).toMatchObject({ status: 803, payments: 0 });
    expect((await pay(11)).status).toBe(200);
    const [payment] = await dataSource(app).query(`SELECT id FROM payments WHERE checkout_session_id = $1`, [session.id]);
    expect(await merchantFeeOf(payment.id)).toBe('10.0000');
  });

  it('in the order the checks always had: the caller’s URL check, the service, the currency and fee, the split list', async () => {
    const httpUrl = 'http://merchant.example.com/callback';
    const urlRefusal = await charge({ service_code: 'NO-SUCH', callback_url: httpUrl });
    expect(urlRefusal.body.message).toMatch(/^callback_url /);
    // The split list's shape is checked where partners are: after the service, the currency and the fee.
    expect(await charge({ service_code: 'NO-SUCH', extra_data: splits() })).toEqual(validation('Invalid service code NO-SUCH'));
    expect((await charge({ currency_code: 'UGX', extra_data: splits() })).body.status_code).toBe(115);
    expect(await charge({ amount: 10, extra_data: splits() })).toEqual(
      validation('amount must be greater than the service fee of 10.0000'),
    );
    expect(await charge({ amount: 10, extra_data: splits(['W999999999', '1']) })).toEqual(
      validation('amount must be greater than the service fee of 10.0000'),
    );
    expect(await checkout({ service_code: 'NO-SUCH', extra_data: splits() })).toEqual(validation('Invalid service code NO-SUCH'));
  });
});
