import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PgRoundTripCounter } from '../../bench/support/round-trips';
import { airtimeBody, createAirtimeMerchant, sendAirtime } from '../support/airtime-fixtures';
import {
  b2bBody,
  createPayoutMerchant,
  expectPayoutAnswer,
  imtBody,
  localPayoutBody,
  PAYOUT_PATHS,
} from '../support/disbursement-fixtures';
import { checkoutBody } from '../support/collections-fixtures';
import { chargeBody, createGatewayMerchant, gateway } from '../support/gateway-fixtures';
import { Money } from '../../src/common/money';
import { FxService } from '../../src/fx/fx.service';
import { createService, fund, moneyBody, post, ref, reverse, walletSet } from '../support/money-fixtures';
import { createTenant, createTestApp } from '../support/test-app';

/** The per-request credential checks (each cached for a while), which are not the operation's own. */
const CREDENTIAL_CHECK = /FROM (api_keys|users) WHERE id/;
const REQUESTS = 10;

/**
 * Payout acceptance (local, IMT, B2B), bulk airtime acceptance, charge acceptance, checkout initiation, wallet
 * reversals, converted wallet credits and operator fundings are one database round trip each (issue 10, item 1): one
 * named statement, no client-side transaction. Counted by a proxy between the app and Postgres.
 */
describe('money operations in one round trip', () => {
  let app: NestFastifyApplication;
  let proxy: PgRoundTripCounter;

  beforeAll(async () => {
    const url = process.env.DATABASE_URL!;
    proxy = await PgRoundTripCounter.for(url);
    process.env.DATABASE_URL = proxy.url(url);
    try {
      app = await createTestApp();
    } finally {
      process.env.DATABASE_URL = url;
    }
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.close();
  });

  /** The operation's own round trips over REQUESTS sequential requests (after one to warm the connection up). */
  async function roundTripsOf(send: (i: number) => Promise<unknown>): Promise<string[]> {
    await send(-1);
    proxy.trace = [];
    for (let i = 0; i < REQUESTS; i++) await send(i);
    const trace = proxy.trace.filter((line) => !CREDENTIAL_CHECK.test(line));
    proxy.trace = null;
    return trace;
  }

  it.each([
    ['local payout', PAYOUT_PATHS.local, localPayoutBody],
    ['IMT', PAYOUT_PATHS.imt, imtBody],
    ['B2B', PAYOUT_PATHS.b2b, b2bBody],
  ])('%s acceptance', async (_kind, path, body) => {
    const merchant = await createPayoutMerchant(app);
    const trace = await roundTripsOf(async () =>
      expectPayoutAnswer(await gateway(app, merchant.token).post(path).send(body(merchant)), 720),
    );
    expect(trace).toHaveLength(REQUESTS);
  });

  it('a refused payout (duplicate reference) is one round trip too', async () => {
    const merchant = await createPayoutMerchant(app);
    const body = localPayoutBody(merchant);
    expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body), 720);
    const trace = await roundTripsOf(async () =>
      expectPayoutAnswer(await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body), 722),
    );
    expect(trace).toHaveLength(REQUESTS);
  });

  it('bulk airtime acceptance', async () => {
    const merchant = await createAirtimeMerchant(app, null);
    const recipients = ['254712345671', '254712345672', '254712345673'].map((phone_number) => ({ phone_number, amount: '5' }));
    const trace = await roundTripsOf(async () => {
      const res = await sendAirtime(app, merchant, airtimeBody(recipients, { service_code: merchant.serviceCode }));
      expect(res.body.response_code).toBe(720);
    });
    expect(trace).toHaveLength(REQUESTS);
  });

  it('charge acceptance and checkout initiation', async () => {
    const merchant = await createGatewayMerchant(app);
    const charges = await roundTripsOf(async () =>
      gateway(app, merchant.token).post('/v1/mobile-money/charge').send(chargeBody(merchant)).expect(200),
    );
    expect(charges).toHaveLength(REQUESTS);
    const checkouts = await roundTripsOf(async () =>
      gateway(app, merchant.token)
        .post('/v2/checkout/initiate')
        .send(checkoutBody(merchant, { url: (path = '/cb') => `https://merchant.invalid${path}` }))
        .expect(200),
    );
    expect(checkouts).toHaveLength(REQUESTS);
  });

  it('wallet reversal, and its replay', async () => {
    const tenant = await createTenant(app);
    const service = await createService(app, tenant);
    const account = await (await walletSet(app, tenant)).create();
    await fund(app, tenant, account, 1000);
    const debits: string[] = [];
    for (let i = 0; i <= REQUESTS; i++) {
      debits.push((await post(app, tenant, 'DEBIT', moneyBody(tenant, account, service, 10)).expect(201)).body.transaction_id);
    }
    const keys = debits.map(() => ref('rev'));
    const reversals = await roundTripsOf((i) => reverse(app, tenant, debits[i + 1], { source_transaction_id: keys[i + 1] }).expect(201));
    expect(reversals).toHaveLength(REQUESTS);
    const replays = await roundTripsOf((i) => reverse(app, tenant, debits[i + 1], { source_transaction_id: keys[i + 1] }).expect(201));
    expect(replays).toHaveLength(REQUESTS);
  });

  it('a credit in another currency than its wallet, and an operator funding', async () => {
    // A pair no other test quotes.
    await app.get(FxService).setRate('DKK', 'NOK', new Money('0.64'), new Money('0.66'), 'test');
    const tenant = await createTenant(app);
    const service = await createService(app, tenant);
    const account = await (await walletSet(app, tenant)).create({ currency: 'DKK' });
    const credits = await roundTripsOf(async () => {
      const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service, 10, { currency: 'NOK' })).expect(201);
      expect(res.body).toEqual(expect.objectContaining({ transaction_amount: '6.4000', original_currency: 'NOK' }));
    });
    expect(credits).toHaveLength(REQUESTS);
    const fundings = await roundTripsOf(() => fund(app, tenant, account, 5));
    expect(fundings).toHaveLength(REQUESTS);
  });
});
