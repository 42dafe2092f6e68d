import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { pgPool } from '../../src/infra/database/prepared';
import { PayoutAcceptance, PayoutsRepository } from '../../src/payouts/payouts.repository';
import { createPayoutMerchant, expectedFloat, floatBalance, payoutReference, payoutToAccept } from '../support/disbursement-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { createTestApp, dataSource, deadlockCount } from '../support/test-app';

/**
 * Payout acceptance by group commit (payout_accept_batch): the payouts a process has in hand at once are one call
 * and one transaction that locks the merchant's float once, each payout accepted or refused as it would be alone.
 */
describe('payouts accepted in groups', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  /** Accepts every payout in one turn of the event loop; the answers and the batch calls made. */
  async function acceptTogether(calls: Array<() => Promise<PayoutAcceptance>>) {
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      const answers = await Promise.all(calls.map((call) => call()));
      const batches = query.mock.calls.filter(([config]) => (config as { name?: string }).name === 'payout_accept_batch').length;
      return { answers, batches };
    } finally {
      query.mockRestore();
    }
  }

  it('a payout the float cannot cover is refused alone; its neighbours in the call are accepted', async () => {
    const merchant = await createPayoutMerchant(app, { float: '250' });
    const repository = app.get(PayoutsRepository);
    const { answers, batches } = await acceptTogether(
      ['100', '1000', '100'].map((amount) => () => repository.accept(payoutToAccept(merchant, payoutReference('grp'), amount))),
    );
    expect(batches).toBe(1);
    expect(answers.map((a) => a.outcome)).toEqual(['ACCEPTED', 'INSUFFICIENT_FLOAT', 'ACCEPTED']);
    // 250 - 2 × (100 + 10) left available, 220 held for the two accepted payouts.
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(30, 220));
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('two processes whose groups hold the same references in opposite orders accept each payout once, without deadlock', async () => {
    const merchant = await createPayoutMerchant(app, { float: '100000' });
    const otherProcess = new PayoutsRepository(dataSource(app)); // its own group in flight, as another API process has
    const references = Array.from({ length: 40 }, () => payoutReference('opp'));
    const deadlocksBefore = await deadlockCount(app);
    const { answers, batches } = await acceptTogether([
      ...references.map((reference) => () => app.get(PayoutsRepository).accept(payoutToAccept(merchant, reference, '50'))),
      ...[...references].reverse().map((reference) => () => otherProcess.accept(payoutToAccept(merchant, reference, '50'))),
    ]);
    expect(batches).toBe(2);
    expect(await deadlockCount(app)).toBe(deadlocksBefore);
    for (let i = 0; i < 40; i++) {
      expect([answers[i].outcome, answers[79 - i].outcome].sort()).toEqual(['ACCEPTED', 'DUPLICATE']);
    }
    const [stored] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM payouts WHERE client_id = $1 AND payout_reference = ANY($2)`,
      [merchant.clientId, references],
    );
    expect(stored.n).toBe(40);
    // 40 × (50 + 10) held, once each.
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(97600, 2400));
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
