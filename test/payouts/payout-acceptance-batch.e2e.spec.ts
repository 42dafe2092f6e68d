import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PAYING_STATES } from '../../src/float/paying-service';
import { pgPool } from '../../src/infra/database/prepared';
import { TOPICS } from '../../src/infra/queue/queues';
import { PayoutAcceptance, PayoutsRepository } from '../../src/payouts/payouts.repository';
import {
  addFloat,
  createPayoutMerchant,
  expectedFloat,
  floatBalance,
  payoutReference,
  payoutToAccept,
} from '../support/disbursement-fixtures';
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

  it('each accepted payout has its own reservation entry, and its float balance after is the running balance', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const repository = app.get(PayoutsRepository);
    const prefix = payoutReference('run'); // one prefix: payouts are taken in reference order
    const references = ['a', 'b', 'c', 'd'].map((x) => `${prefix}-${x}`);
    const { answers, batches } = await acceptTogether(
      references.map((reference, i) => () => repository.accept(payoutToAccept(merchant, reference, ['100', '900', '200', '300'][i]))),
    );
    expect(batches).toBe(1);
    expect(answers.map((a) => a.outcome)).toEqual(['ACCEPTED', 'INSUFFICIENT_FLOAT', 'ACCEPTED', 'ACCEPTED']);
    const rows: Array<{ payout_reference: string; float_balance_after: string; entry_amount: string }> = await dataSource(app).query(
      `SELECT p.payout_reference, p.float_balance_after::text, po.amount::text AS entry_amount
       FROM payouts p JOIN float_holds h ON h.client_id = p.client_id AND h.id = p.hold_id JOIN float_reservations r ON r.client_id = h.client_id AND r.id = h.reservation_id
       JOIN postings po ON po.client_id = r.client_id AND po.entry_id = r.reserve_entry_id AND po.account_id = p.float_account_id
       WHERE p.client_id = $1 ORDER BY p.payout_reference`,
      [merchant.clientId],
    );
    expect(rows).toEqual([
      { payout_reference: references[0], float_balance_after: '890.0000', entry_amount: '-110.0000' },
      { payout_reference: references[2], float_balance_after: '680.0000', entry_amount: '-210.0000' },
      { payout_reference: references[3], float_balance_after: '370.0000', entry_amount: '-310.0000' },
    ]);
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('a reference named twice in one group: when the float is short of the first, the second is tried as if it came next', async () => {
    const merchant = await createPayoutMerchant(app, { float: '250' });
    const repository = app.get(PayoutsRepository);
    const reference = payoutReference('twice');
    const { answers, batches } = await acceptTogether(
      ['1000', '100', '50'].map((amount) => () => repository.accept(payoutToAccept(merchant, reference, amount))),
    );
    expect(batches).toBe(1);
    expect(answers.map((a) => a.outcome)).toEqual(['INSUFFICIENT_FLOAT', 'ACCEPTED', 'DUPLICATE']);
    const stored = await dataSource(app).query(`SELECT amount::text FROM payouts WHERE client_id = $1`, [merchant.clientId]);
    expect(stored).toEqual([{ amount: '100.0000' }]);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(140, 110));
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

  it('one reference raced through two floats of a client: the group that finds it taken is undone and answers DUPLICATE', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const second = await addFloat(app, merchant, '1000');
    const reference = payoutReference('race');
    // A group of the second float that has claimed the reference and not yet committed.
    const runner = dataSource(app).createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const item = payoutToAccept(merchant, reference, '100', { serviceCode: second.serviceCode });
    const [held] = await runner.query(`SELECT outcome FROM payout_accept_batch($1, $2)`, [
      item.clientId,
      JSON.stringify([
        {
          service_code: item.serviceCode,
          kind: item.kind,
          payout_reference: item.payoutReference,
          amount: item.amount.toFixed(),
          currency: item.currency,
          destination_type: item.destinationType,
          destination_name: item.destinationName,
          recipient_account_number: item.recipientAccountNumber,
          recipient_phone_number: item.recipientPhoneNumber,
          request: item.request,
          callback_url: item.callbackUrl,
          rail: item.rail,
          topic: TOPICS.processPayout,
          process_at: item.processAt,
          paying_states: PAYING_STATES,
        },
      ]),
    ]);
    expect(held.outcome).toBe('ACCEPTED');
    try {
      // Through the first float: its check cannot see the uncommitted payout, so it reserves and then waits on it.
      const racing = app.get(PayoutsRepository).accept(payoutToAccept(merchant, reference, '200'));
      for (let i = 0; i < 100; i++) {
        const [waiting] = await dataSource(app).query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`);
        if (waiting.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await runner.commitTransaction();
      expect((await racing).outcome).toBe('DUPLICATE');
    } finally {
      await runner.release();
    }
    const stored = await dataSource(app).query(`SELECT amount::text FROM payouts WHERE client_id = $1`, [merchant.clientId]);
    expect(stored).toEqual([{ amount: '100.0000' }]);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(1000, 0));
    expect(await ledgerViolations(app)).toEqual([]);
  });
});
