import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PAYOUT_RAIL, PayoutAtRail, PayoutOutcome, PayoutRail } from '../../src/rails/payout.rail';
import {
  createPayoutMerchant,
  mobilePayoutBody,
  PAYOUT_PATHS,
  payoutRow,
  waitForPayoutStatus,
  waitForRailAnswer,
} from '../support/disbursement-fixtures';
import { gateway, IsolatedSandbox, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';

/** PAYOUT_RECONCILE_AFTER_MS here: how old the rail's last answer must be before the worker asks again. */
const THRESHOLD_MS = 2500;
/** How soon after it falls due a payout is asked: a pass is timed to the oldest open payout, not to a slow cadence. */
const SLACK_MS = 1000;

/**
 * The worker's reconciliation of stuck payouts, as it runs by itself (no pass called by the test): a payout the rail
 * left pending (703) is asked about again once its last answer is a threshold old, again a threshold after that, and
 * the rail's final answer, once it has one, settles it; never sooner than the threshold, never a threshold late.
 */
describe('payout reconciliation in the worker, timed to the payouts that fall due', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', PAYOUT_RECONCILE_AFTER_MS: String(THRESHOLD_MS) });
    app = sandbox.app;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => sandbox?.close());

  it('a payout left at 703 is asked about a threshold after each answer, and settled by the final one', async () => {
    const merchant = await createPayoutMerchant(app);
    const rail = app.get<PayoutRail>(PAYOUT_RAIL);
    const sandboxAnswer = rail.outcomeOf.bind(rail);
    const asked: number[] = [];
    let answer: PayoutOutcome | null = null;
    jest.spyOn(rail, 'outcomeOf').mockImplementation(async (payout: PayoutAtRail) => {
      if (payout.clientId !== merchant.clientId) return sandboxAnswer(payout);
      asked.push(Date.now());
      return answer ?? sandboxAnswer(payout);
    });

    const body = mobilePayoutBody(merchant, 'pending');
    await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body).expect(200);
    const submitted = await waitForRailAnswer(app, merchant, body.payout_reference as string);
    expect(submitted.status).toBe(703);
    const answered = new Date(submitted.checked_at).getTime();

    // The submission, then two questions a threshold apart.
    await waitFor('the rail to be asked twice again', () => asked.length >= 3, 3 * THRESHOLD_MS + 5000, 10);
    const [first, second] = [asked[1] - answered, asked[2] - asked[1]];
    for (const late of [first, second]) {
      expect(late).toBeGreaterThanOrEqual(THRESHOLD_MS - 50);
      expect(late).toBeLessThan(THRESHOLD_MS + SLACK_MS);
    }
    expect((await payoutRow(app, merchant.clientId, body.payout_reference as string))!.status).toBe(703);

    // The rail has its final answer now: the next question settles the payout.
    answer = { status: 'SUCCEEDED', railReference: 'RAIL-LATE-1' };
    const settled = await waitForPayoutStatus(app, merchant, body.payout_reference as string, 700, {
      timeoutMs: THRESHOLD_MS + SLACK_MS + 1000,
    });
    expect(settled.data).toMatchObject({ payment_status: 700, reference: 'RAIL-LATE-1' });
    expect(asked).toHaveLength(4);
  });
});
