import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { airtimeBody, createAirtimeMerchant, sendAirtime, waitForProcessed } from '../support/airtime-fixtures';
import {
  bankPayoutBody,
  cliJson,
  createPayoutMerchant,
  mobilePayoutBody,
  PAYOUT_PATHS,
  runCli,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';
import {
  chargeBody,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  paymentRow,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';

/**
 * `recon:run` as a person runs it on `npm run sandbox` (issue 33): each sandbox rail answers what it simulated, and
 * its balance is derived from our records (SANDBOX_BALANCES), so every run completes, with a balance line at zero
 * while nothing is off, and the sandbox's pending and jammed numbers as the differences a person works.
 */
describe('recon:run on the sandbox rails', () => {
  jest.setTimeout(240_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let from: string;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '200' });
    app = sandbox.app;
    merchant = await createPayoutMerchant(app, { float: '10000' });
    from = new Date(Date.now() - 3_600_000).toISOString();
  }, 120_000);
  afterAll(async () => sandbox?.close());

  const recon = async (rail: string) =>
    cliJson(
      await runCli(
        sandbox.db.url,
        'recon:run',
        '--rail',
        rail,
        '--from',
        from,
        '--to',
        new Date(Date.now() + 3_600_000).toISOString(),
        '--json',
      ),
    ) as Record<string, any>;
  const show = async (runId: string) => cliJson(await runCli(sandbox.db.url, 'recon:show', '--id', runId, '--json')) as Record<string, any>;

  async function charge(...amounts: string[]) {
    const charges: string[] = [];
    for (const amount of amounts) {
      const body = chargeBody(merchant, { amount });
      expect((await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body)).status).toBeLessThan(300);
      charges.push(body.external_reference as string);
    }
    await waitFor('the charges settled', async () => {
      const rows = await Promise.all(charges.map((ref) => paymentRow(app, merchant.clientId, ref)));
      return rows.every((row) => row?.payment_status === 700) || undefined;
    });
  }

  it('matches what the simulators did, completes every rail with a balance rolled forward to zero', async () => {
    // The simulated accounts opened empty before anything moved: a person records it once per rail.
    const refused = await runCli(sandbox.db.url, 'recon:opening', '--rail', 'mpesa', '--amount', '1.23456', '--currency', 'KES');
    expect([refused.code === 0, refused.stderr]).toEqual([
      false,
      expect.stringMatching(/--amount must be a number with at most four decimals/),
    ]);
    for (const rail of ['mpesa', 'jenga', 'africastalking']) {
      const set = await runCli(
        sandbox.db.url,
        'recon:opening',
        '--rail',
        rail,
        '--amount',
        '0',
        '--currency',
        'KES',
        '--at',
        from,
        '--json',
      );
      expect(set.code).toBe(0);
    }
    await charge('100', '250.50');
    const paid = mobilePayoutBody(merchant, 'ok', { sender_amount: '150.00' });
    const jammed = mobilePayoutBody(merchant, 'jammed');
    const bank = bankPayoutBody(merchant, 'ok', { sender_amount: '80.00' });
    for (const body of [paid, jammed])
      expect((await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body)).status).toBeLessThan(300);
    expect((await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(bank)).status).toBeLessThan(300);
    await waitForPayoutStatus(app, merchant, paid.payout_reference as string, 700);
    await waitForPayoutStatus(app, merchant, bank.payout_reference as string, 700);
    const airtime = await createAirtimeMerchant(app, null, { float: '1000' });
    const topUp = airtimeBody([{ phone_number: '254712345678', amount: '50' }], { service_code: airtime.serviceCode });
    expect((await sendAirtime(app, airtime, topUp)).status).toBeLessThan(300);
    await waitForProcessed(app, airtime, topUp.reference);

    const mpesa = await recon('mpesa');
    expect([mpesa.outcome, mpesa.reason]).toEqual(['COMPLETE', null]);
    // Two charges, the paid payout, and the jammed one, which the simulator never answers either.
    expect(mpesa.counts.outcomes.MATCHED).toBe(4);
    // The simulated account holds what the charges brought in less the payout it paid; the jammed payout's amount and
    // fee are in flight beside it.
    expect(mpesa.balance).toMatchObject({ movements: '200.5000', expected: '200.5000', operator: '200.5000', difference: '0.0000' });
    expect(mpesa.balance.opening.source).toMatch(/^opening \d+$/);
    expect(new Decimal(mpesa.balance.in_flight).gt(0)).toBe(true);
    expect((await show(mpesa.run_id)).rows).toEqual([]);

    const spent: Record<string, string> = { jenga: '-80.0000', africastalking: '-50.0000' };
    for (const rail of ['jenga', 'africastalking']) {
      const run = await recon(rail);
      expect([rail, run.outcome, run.counts.outcomes.MATCHED, run.balance.movements, run.balance.difference]).toEqual([
        rail,
        'COMPLETE',
        1,
        spent[rail],
        '0.0000',
      ]);
      expect((await show(run.run_id)).rows).toEqual([]);
    }

    // The next day: rolled forward from the last run's balance by what succeeded since, zero again.
    await charge('49.50');
    const next = await recon('mpesa');
    expect(next.balance).toMatchObject({
      opening: { amount: '200.5000', source: `run ${mpesa.run_id}` },
      movements: '49.5000',
      operator: '250.0000',
      difference: '0.0000',
    });
  });
});
