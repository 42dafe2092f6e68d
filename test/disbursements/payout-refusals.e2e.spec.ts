import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { airtimeBody, sendAirtime } from '../support/airtime-fixtures';
import {
  b2bBody,
  createPayoutMerchant,
  expectPayoutAnswer,
  imtBody,
  localPayoutBody,
  PAYOUT_PATHS,
  payoutReference,
} from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * Everything acceptance could write for a client, and the balances of all its ledger accounts: a refused request
 * (whose claim of the reference and whose reservation are undone inside the acceptance call) changes none of it.
 */
async function footprint(app: NestFastifyApplication, merchant: GatewayMerchant) {
  const [row] = await dataSource(app).query(
    `SELECT (SELECT count(*)::int FROM payouts WHERE client_id = $1) AS payouts,
            (SELECT count(*)::int FROM airtime_requests WHERE client_id = $1) AS airtime_requests,
            (SELECT count(*)::int FROM float_reservations WHERE client_id = $1) AS reservations,
            (SELECT count(*)::int FROM float_holds WHERE client_id = $1) AS holds,
            (SELECT count(*)::int FROM journal_entries WHERE client_id = $1) AS entries,
            (SELECT json_object_agg(account_number, balance::text) FROM ledger_accounts WHERE client_id = $1) AS balances`,
    [merchant.clientId],
  );
  return row;
}

/** Outbox jobs naming a payout or an airtime request that does not exist (a refused request's job would). */
async function orphanJobs(app: NestFastifyApplication): Promise<number> {
  const [row] = await dataSource(app).query(
    `SELECT count(*)::int AS n FROM outbox o
     WHERE (o.topic = 'payouts.process' AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.client_id = o.client_id AND p.id::text = o.payload->>'payoutId'))
        OR (o.topic = 'airtime.process' AND NOT EXISTS (SELECT 1 FROM airtime_requests q WHERE q.client_id = o.client_id AND q.id::text = o.payload->>'requestId'))`,
  );
  return row.n;
}

/** A payout or airtime request the float cannot pay (too little, or a float that may not pay) is refused and changes nothing. */
describe('refused by the float', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  it.each([
    ['local', PAYOUT_PATHS.local, localPayoutBody],
    ['IMT', PAYOUT_PATHS.imt, imtBody],
    ['B2B', PAYOUT_PATHS.b2b, b2bBody],
  ])('%s: nothing stored, no money moved, no job queued, the reference still free', async (_kind, path, body) => {
    const merchant = await createPayoutMerchant(app, { float: '5' });
    const before = await footprint(app, merchant);
    const request = body(merchant);
    const refused = await gateway(app, merchant.token).post(path).send(request);
    expectPayoutAnswer(refused, 721, request.payout_reference as string, 'INSUFFICIENT_BALANCE');
    expect(await footprint(app, merchant)).toEqual(before);
    expect(await orphanJobs(app)).toBe(0);
  });

  it('10 identical requests at once that the float cannot cover: each is refused 721 (none 722), nothing stored', async () => {
    const merchant = await createPayoutMerchant(app, { float: '109.9999' });
    const before = await footprint(app, merchant);
    const request = localPayoutBody(merchant, { payout_reference: payoutReference(), sender_amount: '100', recipient_amount: '100' });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(request)),
    );
    for (const answer of answers) expectPayoutAnswer(answer, 721, request.payout_reference as string, 'INSUFFICIENT_BALANCE');
    expect(await footprint(app, merchant)).toEqual(before);
    expect(await orphanJobs(app)).toBe(0);
  });

  it('a float that may not pay (DORMANT, SUSPENDED) → 721 INVALID_WALLET for payouts and airtime, nothing stored', async () => {
    for (const command of ['DORMANT', 'SUSPEND']) {
      const merchant = await createPayoutMerchant(app);
      await request(app.getHttpServer())
        .post(`/api/v1/accounts/account-number/${merchant.settlementAccountNumber}?command=${command}`)
        .set('authorization', merchant.tenant.auth)
        .expect(200);
      const before = await footprint(app, merchant);
      const payout = localPayoutBody(merchant);
      const refused = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(payout);
      expectPayoutAnswer(refused, 721, payout.payout_reference as string, 'INVALID_WALLET');
      expect(refused.body.response_description).toBe(`The float of service ${merchant.serviceCode} is not active`);
      const airtime = await sendAirtime(
        app,
        merchant,
        airtimeBody([{ phone_number: '254712345671', amount: '5' }], { service_code: merchant.serviceCode }),
      );
      expect(airtime.status).toBe(400);
      expect(airtime.body).toMatchObject({ response_code: 721, error_code: 'INVALID_WALLET' });
      expect(await footprint(app, merchant)).toEqual(before);
    }
  });

  it('bulk airtime: nothing stored, no money moved, no job queued', async () => {
    const merchant = await createPayoutMerchant(app, { float: '29.9999' });
    const before = await footprint(app, merchant);
    const body = airtimeBody(
      [
        { phone_number: '254712345671', amount: '5' },
        { phone_number: '254712345672', amount: '5' },
      ],
      { service_code: merchant.serviceCode },
    );
    const refused = await sendAirtime(app, merchant, body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ reference: body.reference, response_code: 721, error_code: 'INSUFFICIENT_BALANCE' });
    expect(await footprint(app, merchant)).toEqual(before);
    expect(await orphanJobs(app)).toBe(0);
  });
});
