import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { AirtimeReconciliationService } from '../../src/airtime/airtime-reconciliation.service';
import { AIRTIME_RAIL, AirtimeOutcome, AirtimeRail, AirtimeTopUp } from '../../src/rails/airtime.rail';
import {
  airtimeCallbacksScheduled,
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  airtimeStatus,
  createAirtimeMerchant,
  sendAirtime,
  waitForProcessed,
} from '../support/airtime-fixtures';
import { IsolatedSandbox, MerchantReceiver, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { countsOf, dataSource } from '../support/test-app';

jest.setTimeout(120_000);

const RECONCILE_AFTER_MS = 1000;
const FEE = 10; // the merchant's FIXED airtime fee

/**
 * Stuck airtime (issue 9, item 8): the worker re-asks the provider about recipients left processing (601) or jammed
 * (604) once the last ask is PAYOUT_RECONCILE_AFTER_MS old, and books a final answer through the processing path:
 * one ledger entry per hold, one callback per final recipient, and nothing more on later passes. The sandbox
 * provider answers by number, so its 601/604 numbers stay held; a test answer stands in for a provider that
 * later resolves them.
 */
describe('airtime reconciliation (worker, sandbox provider)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let rail: AirtimeRail;
  let reconciliation: AirtimeReconciliationService;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', PAYOUT_RECONCILE_AFTER_MS: String(RECONCILE_AFTER_MS) });
    ({ app, receiver } = sandbox);
    rail = app.get(AIRTIME_RAIL);
    reconciliation = app.get(AirtimeReconciliationService);
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    if (app) expect(await ledgerViolations(app)).toEqual([]);
    await sandbox?.close();
  });

  /** Accepts a request and waits until the provider was asked about every recipient. */
  async function send(merchant: AirtimeMerchant, recipients: Array<{ phone_number: string; amount: string }>) {
    const body = airtimeBody(recipients, { service_code: merchant.serviceCode });
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    const results = await waitForProcessed(app, merchant, body.reference);
    return { reference: body.reference, results };
  }

  /** Per recipient of the request: its status, its hold and how many ledger entries resolved the hold. */
  async function holds(reference: string) {
    return dataSource(app).query(
      `SELECT r.position, r.service_status, h.status AS hold,
              (SELECT count(*)::int FROM journal_entries e WHERE e.client_id = h.client_id AND e.id = h.outcome_entry_id) AS outcome_entries
       FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id
       WHERE q.reference = $1 ORDER BY r.position`,
      [reference],
    );
  }

  async function footprint(merchant: AirtimeMerchant) {
    const [entries, callbacks] = await countsOf(app, merchant.clientId, ['journal_entries', 'callback_deliveries']);
    return { entries, callbacks, money: await airtimeMoney(app, merchant) };
  }

  /** The provider now answers `answers` by correlation id, and the sandbox's answer for every other top-up. */
  function providerAnswers(answers: Record<string, AirtimeOutcome>) {
    const sandboxAnswer = rail.outcomeOf.bind(rail);
    return jest
      .spyOn(rail, 'outcomeOf')
      .mockImplementation(async (topUps: AirtimeTopUp[]) =>
        Promise.all(topUps.map(async (t) => answers[t.correlationId] ?? (await sandboxAnswer([t]))[0])),
      );
  }

  it('re-asks about 601/604 recipients, keeps them held while the provider says so, and books its final answer once', async () => {
    const merchant = await createAirtimeMerchant(app, receiver);
    const before = await airtimeMoney(app, merchant);
    const outcomeOf = jest.spyOn(rail, 'outcomeOf');
    const { reference, results } = await send(merchant, [
      { phone_number: '254700000002', amount: '10.1234' },
      { phone_number: '254700000003', amount: '20.5001' },
      { phone_number: '254712345678', amount: '5' },
    ]);
    const [processing, jammed] = results;
    expect(results.map((r) => r.service_status)).toEqual([601, 604, 602]);
    const withFee = (amount: string) => new Decimal(amount).plus(FEE);
    const held = withFee('10.1234').plus(withFee('20.5001'));
    const afterProcessing = await airtimeMoney(app, merchant);
    expect(afterProcessing.float).toBe(new Decimal(before.float).minus(held).minus(withFee('5')).toFixed(4));
    expect(afterProcessing.inFlight).toBe(new Decimal(before.inFlight).plus(held).toFixed(4));

    // The worker re-asks once the last ask is overdue; the sandbox still answers by number, so both stay held.
    const asked = (t: AirtimeTopUp) => [processing.correlation_id, jammed.correlation_id].includes(t.correlationId);
    await waitFor(
      'the worker to re-ask about both stuck recipients',
      () => outcomeOf.mock.calls.flatMap(([topUps]) => topUps).filter(asked).length >= 2,
      30_000,
    );
    expect((await holds(reference)).map((h: { service_status: number; hold: string }) => [h.service_status, h.hold])).toEqual([
      [601, 'HELD'],
      [604, 'HELD'],
      [602, 'SETTLED'],
    ]);
    expect(await airtimeMoney(app, merchant)).toEqual(afterProcessing);

    // The provider has final answers now: the top-up went through, the jammed one failed.
    outcomeOf.mockRestore();
    providerAnswers({
      [processing.correlation_id]: { status: 'SUCCESSFUL', providerReference: 'PROV-LATE-1' },
      [jammed.correlation_id]: { status: 'FAILED', reason: 'Number barred' },
    });
    const finalResults = await waitFor(
      'the worker to book both answers',
      async () => {
        const res = await airtimeStatus(app, merchant, reference);
        return res.body.every((r: { service_status: number }) => [602, 603].includes(r.service_status)) ? res.body : undefined;
      },
      30_000,
      100,
    );
    expect(finalResults.map((r: { service_status: number }) => r.service_status)).toEqual([602, 603, 602]);
    expect(finalResults[0]).toMatchObject({ provider_reference: 'PROV-LATE-1', message: 'Airtime sent' });
    expect(await holds(reference)).toEqual([
      { position: 1, service_status: 602, hold: 'SETTLED', outcome_entries: 1 },
      { position: 2, service_status: 603, hold: 'RELEASED', outcome_entries: 1 },
      { position: 3, service_status: 602, hold: 'SETTLED', outcome_entries: 1 },
    ]);
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus(withFee('10.1234')).minus(withFee('5')).toFixed(4));
    expect(after.inFlight).toBe(before.inFlight);
    expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus(2 * FEE).toFixed(4));

    // One callback per final recipient, the late ones equal to their status items.
    expect(await airtimeCallbacksScheduled(app, merchant.clientId)).toBe(3);
    await waitFor('three callbacks', () => receiver.at(merchant.airtimeUrl!).length >= 3, 30_000);
    const callbacks = receiver.at(merchant.airtimeUrl!).map((c) => c.body);
    expect(callbacks).toEqual(expect.arrayContaining(finalResults));

    // Later passes, even far in the future, find nothing to do and change nothing.
    const settled = await footprint(merchant);
    expect(await reconciliation.reconcile(new Date(Date.now() + 100 * RECONCILE_AFTER_MS))).toEqual({ checked: 0, finished: 0 });
    expect(await footprint(merchant)).toEqual(settled);
  });

  it('passes run by several workers at once ask about each stuck recipient once and book it once', async () => {
    const merchant = await createAirtimeMerchant(app, receiver);
    const amounts = ['1.0001', '2.0002', '3.0003', '4.0004'];
    const { reference, results } = await send(
      merchant,
      amounts.map((amount, i) => ({ phone_number: `${900 + i}25470000000${i % 2 === 0 ? 2 : 3}`, amount })),
    );
    expect(results.map((r) => r.service_status)).toEqual([601, 604, 601, 604]);
    const before = await airtimeMoney(app, merchant);
    const outcomeOf = providerAnswers(
      Object.fromEntries(results.map((r) => [r.correlation_id, { status: 'SUCCESSFUL', providerReference: `P-${r.correlation_id}` }])),
    );

    // Until all four are booked, four passes at a time (standing in for four workers, besides the worker's own).
    await waitFor(
      'all four booked',
      async () => {
        await Promise.all(Array.from({ length: 4 }, () => reconciliation.reconcile()));
        return (await holds(reference)).every((h: { hold: string }) => h.hold === 'SETTLED');
      },
      30_000,
    );
    const mine = new Set(results.map((r) => r.correlation_id));
    expect(outcomeOf.mock.calls.flatMap(([topUps]) => topUps).filter((t) => mine.has(t.correlationId))).toHaveLength(4);
    expect((await holds(reference)).map((h: { outcome_entries: number }) => h.outcome_entries)).toEqual([1, 1, 1, 1]);
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(before.float);
    expect(after.inFlight).toBe(
      new Decimal(before.inFlight).minus(amounts.reduce((t, a) => t.plus(a).plus(FEE), new Decimal(0))).toFixed(4),
    );
    expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus(4 * FEE).toFixed(4));
    expect(await airtimeCallbacksScheduled(app, merchant.clientId)).toBe(4);
    await waitFor('four callbacks', () => receiver.at(merchant.airtimeUrl!).length >= 4, 30_000);
  });
});
