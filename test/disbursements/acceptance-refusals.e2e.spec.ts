import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { airtimeBody, createAirtimeMerchant, sendAirtime } from '../support/airtime-fixtures';
import { b2bBody, createPayoutMerchant, imtBody, localPayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * Every way payout and airtime acceptance (payout_accept_batch, airtime_accept) refuses a request, with the whole body
 * and HTTP status the API answers: the SQL names what it found, the TypeScript words it.
 */
describe('acceptance refusals, word for word', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  /** A second active service of the merchant's client, without a float (settlement wallet). */
  async function serviceWithoutFloat(merchant: GatewayMerchant): Promise<string> {
    const res = await request(app.getHttpServer()).post('/api/v1/client-services').set('authorization', merchant.tenant.auth).send({
      client_code: merchant.clientCode,
      client_service_name: 'No float',
      service_code: 'CUSTOM_SERVICE',
      has_transaction_fee: false,
      minimum_transaction_amount: 1,
      maximum_transaction_amount: 1000,
      is_active: 1,
    });
    expect(res.status).toBe(201);
    return res.body.client_service_code as string;
  }

  async function suspendFloat(merchant: GatewayMerchant): Promise<void> {
    await request(app.getHttpServer())
      .post(`/api/v1/accounts/account-number/${merchant.settlementAccountNumber}?command=SUSPEND`)
      .set('authorization', merchant.tenant.auth)
      .expect(200);
  }

  describe('payouts', () => {
    async function answer(merchant: GatewayMerchant, body: Record<string, unknown>, path: string = PAYOUT_PATHS.local) {
      const res = await gateway(app, merchant.token).post(path).send(body);
      return { status: res.status, body: res.body };
    }
    const rejected = (body: Record<string, unknown>, error_code: string, response_description: string) => ({
      status: 400,
      body: { payout_reference: body.payout_reference, response_code: 721, response_description, error_code },
    });

    it('an unknown or inactive service', async () => {
      const merchant = await createPayoutMerchant(app);
      const unknown = localPayoutBody(merchant, { service_code: 'NO_SUCH_SERVICE' });
      expect(await answer(merchant, unknown)).toEqual(rejected(unknown, 'SERVICE_NOT_ALLOWED', 'Invalid Service'));
      const inactive = await createPayoutMerchant(app, { serviceOverrides: { is_active: 0 } });
      const body = b2bBody(inactive);
      expect(await answer(inactive, body, PAYOUT_PATHS.b2b)).toEqual(rejected(body, 'SERVICE_NOT_ALLOWED', 'Invalid Service'));
    });

    it('a service without a float, and a float that may not pay', async () => {
      const merchant = await createPayoutMerchant(app);
      const code = await serviceWithoutFloat(merchant);
      const noFloat = localPayoutBody(merchant, { service_code: code });
      expect(await answer(merchant, noFloat)).toEqual(
        rejected(noFloat, 'INVALID_WALLET', `Service ${code} has no float (settlement wallet) configured`),
      );
      await suspendFloat(merchant);
      const body = imtBody(merchant);
      expect(await answer(merchant, body, PAYOUT_PATHS.imt)).toEqual(
        rejected(body, 'INVALID_WALLET', `The float of service ${merchant.serviceCode} is not active`),
      );
    });

    it('a request in another currency than the float', async () => {
      const merchant = await createPayoutMerchant(app);
      const body = localPayoutBody(merchant, { source_currency: 'USD' });
      expect(await answer(merchant, body)).toEqual(
        rejected(body, 'SERVICE_NOT_ALLOWED', `Service ${merchant.serviceCode} pays out of a KES float; the request is in USD`),
      );
      const b2b = b2bBody(merchant, { currency_code: 'UGX' });
      expect(await answer(merchant, b2b, PAYOUT_PATHS.b2b)).toEqual(
        rejected(b2b, 'SERVICE_NOT_ALLOWED', `Service ${merchant.serviceCode} pays out of a KES float; the request is in UGX`),
      );
    });

    it('an amount outside the service bounds', async () => {
      const merchant = await createPayoutMerchant(app, {
        serviceOverrides: { minimum_transaction_amount: 2.5, maximum_transaction_amount: 500.125 },
      });
      for (const amount of ['2.4999', '500.1251']) {
        const body = localPayoutBody(merchant, { sender_amount: amount, recipient_amount: amount });
        expect(await answer(merchant, body)).toEqual(
          rejected(body, 'VALIDATION_FAILED', 'Validation Failed: the amount must be between 2.5000 and 500.1250'),
        );
      }
    });

    it('a float short of amount + fee, and a reference used before', async () => {
      const merchant = await createPayoutMerchant(app, { float: '110.0000' });
      const short = localPayoutBody(merchant, { sender_amount: '100.0001', recipient_amount: '100.0001' });
      expect(await answer(merchant, short)).toEqual(
        rejected(short, 'INSUFFICIENT_BALANCE', 'Insufficient float balance for KES 100.0001 plus the fee of 10.0000'),
      );
      const body = localPayoutBody(merchant, { sender_amount: '100', recipient_amount: '100' });
      expect((await answer(merchant, body)).status).toBe(200);
      expect(await answer(merchant, { ...body, sender_amount: '1', recipient_amount: '1' })).toEqual({
        status: 409,
        body: {
          payout_reference: body.payout_reference,
          response_code: 722,
          response_description: 'Duplicate ignored: a payout with this payout_reference exists',
          error_code: 'DUPLICATE_IGNORED',
        },
      });
    });
  });

  describe('bulk airtime', () => {
    async function answer(merchant: GatewayMerchant, body: Record<string, unknown>) {
      const res = await sendAirtime(app, merchant, body);
      return { status: res.status, body: res.body };
    }
    const rejected = (body: Record<string, unknown>, error_code: string, response_description: string, message: string) => ({
      status: 400,
      body: { reference: body.reference, response_code: 721, response_description, error_code, message },
    });
    const one = [{ phone_number: '254712345671', amount: '5' }];

    it('no service named and no default airtime service; an unknown or inactive service', async () => {
      const merchant = await createAirtimeMerchant(app, null);
      const none = airtimeBody(one);
      expect(await answer(merchant, none)).toEqual(
        rejected(none, 'SERVICE_NOT_ALLOWED', 'Invalid Service', 'No service_code given and no default airtime service configured'),
      );
      const unknown = airtimeBody(one, { service_code: 'NO_SUCH_SERVICE' });
      expect(await answer(merchant, unknown)).toEqual(
        rejected(unknown, 'SERVICE_NOT_ALLOWED', 'Invalid Service', 'Invalid service code NO_SUCH_SERVICE'),
      );
      const inactive = await createAirtimeMerchant(app, null, { serviceOverrides: { is_active: 0 } });
      await dataSource(app).query(`UPDATE client_services SET is_default_airtime = true WHERE code = $1`, [inactive.serviceCode]);
      const byDefault = airtimeBody(one);
      expect(await answer(inactive, byDefault)).toEqual(
        rejected(byDefault, 'SERVICE_NOT_ALLOWED', 'Invalid Service', `Invalid service code ${inactive.serviceCode}`),
      );
    });

    it('a default service without a float, and a float that may not pay', async () => {
      const merchant = await createAirtimeMerchant(app, null);
      const code = await serviceWithoutFloat(merchant);
      await dataSource(app).query(`UPDATE client_services SET is_default_airtime = true WHERE code = $1`, [code]);
      const noFloat = airtimeBody(one);
      expect(await answer(merchant, noFloat)).toEqual(
        rejected(noFloat, 'INVALID_WALLET', 'Invalid Wallet', `Service ${code} has no float (settlement wallet) configured`),
      );
      await suspendFloat(merchant);
      const body = airtimeBody(one, { service_code: merchant.serviceCode });
      expect(await answer(merchant, body)).toEqual(
        rejected(body, 'INVALID_WALLET', 'Invalid Wallet', `The float of service ${merchant.serviceCode} is not active`),
      );
    });

    it('the first recipient whose amount is outside the service bounds', async () => {
      const merchant = await createAirtimeMerchant(app, null, {
        serviceOverrides: { minimum_transaction_amount: 2.5, maximum_transaction_amount: 500.125 },
      });
      const body = airtimeBody(
        [
          { phone_number: '254712345671', amount: '2.5' },
          { phone_number: '254712345672', amount: '500.1251' },
          { phone_number: '254712345673', amount: '2.4999' },
        ],
        { service_code: merchant.serviceCode },
      );
      expect(await answer(merchant, body)).toEqual(
        rejected(body, 'VALIDATION_FAILED', 'Validation Failed', 'recipients.1.amount must be between 2.5000 and 500.1250'),
      );
    });

    it('a float short of the amounts and fees, and a reference used before', async () => {
      const merchant = await createAirtimeMerchant(app, null, { float: '29.9999' });
      const two = [
        { phone_number: '254712345671', amount: '5' },
        { phone_number: '254712345672', amount: '5' },
      ];
      const short = airtimeBody(two, { service_code: merchant.serviceCode });
      expect(await answer(merchant, short)).toEqual(
        rejected(short, 'INSUFFICIENT_BALANCE', 'Insufficient Balance', 'The float does not cover the amounts and fees of all recipients'),
      );
      const body = airtimeBody(one, { service_code: merchant.serviceCode });
      expect((await answer(merchant, body)).status).toBe(200);
      expect(await answer(merchant, { ...body, recipients: two })).toEqual({
        status: 409,
        body: {
          reference: body.reference,
          response_code: 722,
          response_description: 'Duplicate Ignored',
          error_code: 'DUPLICATE_IGNORED',
          message: 'An airtime request with this reference exists',
        },
      });
    });
  });
});
