import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { AirtimeAcceptance, AirtimeRepository, AirtimeToAccept } from '../../src/airtime/airtime.repository';
import { pgPool } from '../../src/infra/database/prepared';
import { createAirtimeMerchant } from '../support/airtime-fixtures';
import { expectedFloat, floatBalance, payoutReference } from '../support/disbursement-fixtures';
import { GatewayMerchant } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { createTestApp, dataSource, deadlockCount } from '../support/test-app';

/**
 * Bulk airtime acceptance by group commit (airtime_accept_batch): the requests a process has in hand at once are
 * one call and one transaction that locks the merchant's float once, each accepted or refused as it would be alone.
 */
describe('airtime requests accepted in groups', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  /** A request for one recipient of `amount` (fee 10) from the merchant's service; its jobs are an hour away. */
  const request = (merchant: GatewayMerchant, reference: string, amount: string): AirtimeToAccept => ({
    clientId: merchant.clientId,
    reference,
    serviceCode: merchant.serviceCode,
    recipients: [{ phoneNumber: '254712345671', amount: new Decimal(amount) }],
    message: 'Accepted',
    recipientsPerJob: 100,
    processAt: new Date(Date.now() + 3_600_000),
  });

  /** Accepts every request in one turn of the event loop; the answers and the batch calls made. */
  async function acceptTogether(calls: Array<() => Promise<AirtimeAcceptance>>) {
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      const answers = await Promise.all(calls.map((call) => call()));
      const batches = query.mock.calls.filter(([config]) => (config as { name?: string }).name === 'airtime_accept_batch').length;
      return { answers, batches };
    } finally {
      query.mockRestore();
    }
  }

  it('a request the float cannot cover is refused alone; its neighbours in the call are accepted', async () => {
    const merchant = await createAirtimeMerchant(app, null, { float: '250' });
    const repository = app.get(AirtimeRepository);
    const { answers, batches } = await acceptTogether(
      ['100', '1000', '100'].map((amount) => () => repository.accept(request(merchant, payoutReference('air'), amount))),
    );
    expect(batches).toBe(1);
    expect(answers.map((a) => a.outcome)).toEqual(['ACCEPTED', 'INSUFFICIENT_FLOAT', 'ACCEPTED']);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(30, 220));
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('two processes whose groups hold the same references in opposite orders accept each request once, without deadlock', async () => {
    const merchant = await createAirtimeMerchant(app, null, { float: '100000' });
    const otherProcess = new AirtimeRepository(dataSource(app)); // its own group in flight, as another API process has
    const references = Array.from({ length: 20 }, () => payoutReference('air-opp'));
    const deadlocksBefore = await deadlockCount(app);
    const { answers, batches } = await acceptTogether([
      ...references.map((reference) => () => app.get(AirtimeRepository).accept(request(merchant, reference, '50'))),
      ...[...references].reverse().map((reference) => () => otherProcess.accept(request(merchant, reference, '50'))),
    ]);
    expect(batches).toBe(2);
    expect(await deadlockCount(app)).toBe(deadlocksBefore);
    for (let i = 0; i < 20; i++) {
      expect([answers[i].outcome, answers[39 - i].outcome].sort()).toEqual(['ACCEPTED', 'DUPLICATE']);
    }
    // 20 × (50 + 10) held, once each.
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(98800, 1200));
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
