import { chargeBody, waitFor } from '../support/gateway-fixtures';
import { localPayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { diagnostics } from '../support/child-processes';
import { RailsCluster } from '../support/rails-cluster';

const COOLDOWN_MS = 10_000;

/**
 * Issue 19: each real rail has a circuit, shared by every process. A worker's failed calls to M-Pesa open it, so the
 * api (another process) refuses new M-Pesa charges (174) and payouts (721 FAILED) without storing anything, while
 * the bank rail still takes payouts; /health/ready and /metrics show it, the process stays ready; after the
 * cool-down a new request probes, its success closes the circuit, and the payouts accepted before are paid.
 */
describe('rail health: circuits across processes (Daraja and Jenga stubs)', () => {
  const cluster = new RailsCluster();

  beforeAll(async () => {
    await cluster.start(1, { RAIL_CIRCUIT_FAILURES: '2', RAIL_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS) });
  }, 180_000);
  afterAll(async () => cluster.close(), 60_000);

  const ready = async () => {
    const res = await fetch(`${cluster.apiUrl}/health/ready`);
    return { status: res.status, rails: ((await res.json()) as any).info.rails as Record<string, Record<string, unknown>> };
  };
  const stored = async () =>
    (
      await cluster.query(
        `SELECT (SELECT count(*)::int FROM payments WHERE client_id = $1) AS payments,
                (SELECT count(*)::int FROM payouts WHERE client_id = $1) AS payouts,
                (SELECT count(*)::int FROM float_holds WHERE client_id = $1) AS holds,
                (SELECT count(*)::int FROM journal_entries WHERE client_id = $1) AS entries`,
        [cluster.merchant.clientId],
      )
    )[0];
  const floatBalance = async () => {
    const res = await fetch(`${cluster.apiUrl}/v1/accounts/${cluster.merchant.settlementAccountNumber}/balance`, {
      headers: { 'x-access-token': cluster.merchant.token },
    });
    return ((await res.json()) as { balance: string }).balance;
  };
  const bankBody = () =>
    localPayoutBody(cluster.merchant, {
      destination_type: 'BANK',
      destination_name: 'BANK_KEN',
      recipient_account_number: '0240198765432',
      recipient_bank_code: '11',
    });
  const payoutStatus = async (reference: unknown) =>
    (
      await cluster.query(`SELECT status FROM payouts WHERE client_id = $1 AND payout_reference = $2`, [
        cluster.merchant.clientId,
        reference,
      ])
    )[0]?.status as number | undefined;

  it('opens on M-Pesa failures met by the worker; the api refuses new M-Pesa requests, stores nothing, and recovers', async () => {
    const before = await ready();
    expect(before.status).toBe(200);
    expect(before.rails).toMatchObject({
      mobile_money: { operator: 'mpesa', circuit: 'CLOSED', last_success_at: null },
      bank: { operator: 'jenga', circuit: 'CLOSED' },
      airtime: { operator: 'sandbox', simulator: true },
      fx: { operator: 'sandbox', simulator: true },
    });

    // Daraja arrests every B2C (spike arrest: not taken). Two payouts accepted, the worker's sends fail twice: open.
    cluster.daraja.plan = () => ({ fault: 'busy' });
    const held = [localPayoutBody(cluster.merchant), localPayoutBody(cluster.merchant)];
    for (const body of held) expect((await cluster.post(PAYOUT_PATHS.local, body)).status).toBe(200);
    const open = await waitFor('the api to see the open circuit', async () => {
      const seen = await ready();
      return seen.rails.mobile_money.circuit === 'OPEN' ? seen : undefined;
    }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${diagnostics(cluster.processes)}`, { cause: error });
    });
    expect(open.status).toBe(200); // still ready: the other rails are served
    expect(open.rails.mobile_money).toMatchObject({ last_error: expect.stringMatching(/Spike arrest/i) });
    const metrics = await (await fetch(`${cluster.apiUrl}/metrics`)).text();
    expect(metrics).toContain('paygate_rail_circuit_state{rail="mobile_money",operator="mpesa",state="open"} 1');
    expect(metrics).toContain('paygate_rail_circuit_state{rail="bank",operator="jenga",state="closed"} 1');

    // New M-Pesa requests are refused with the interfaces' outage answers, and nothing is stored or held.
    const [counts, balance] = [await stored(), await floatBalance()];
    const charge = await cluster.post('/v1/mobile-money/charge', chargeBody(cluster.merchant));
    expect({ status: charge.status, body: await charge.json() }).toEqual({
      status: 503,
      body: {
        status_code: 174,
        status_description: 'Service unavailable',
        message: expect.stringMatching(/mobile-money rail \(M-Pesa\) is unavailable/),
      },
    });
    const refused = localPayoutBody(cluster.merchant);
    const payout = await cluster.post(PAYOUT_PATHS.local, refused);
    expect({ status: payout.status, body: await payout.json() }).toEqual({
      status: 503,
      body: {
        payout_reference: refused.payout_reference,
        response_code: 721,
        error_code: 'FAILED',
        response_description: expect.stringMatching(/mobile-money rail \(M-Pesa\) is unavailable .*nothing was stored/),
      },
    });
    expect(await stored()).toEqual(counts);
    expect(await floatBalance()).toBe(balance);
    expect(cluster.daraja.sent('STK_PUSH')).toBe(0);

    // The bank rail is another circuit: a bank payout is taken and paid meanwhile.
    const bank = bankBody();
    expect((await cluster.post(PAYOUT_PATHS.local, bank)).status).toBe(200);
    await waitFor('the bank payout paid', async () => ((await payoutStatus(bank.payout_reference)) === 700 ? true : undefined), 30_000);

    // Daraja recovers. After the cool-down the circuit is half-open: a new payout is accepted and its send probes.
    cluster.daraja.plan = () => ({});
    await waitFor(
      'half-open',
      async () => ((await ready()).rails.mobile_money.circuit === 'HALF_OPEN' ? true : undefined),
      COOLDOWN_MS * 3,
    );
    const probe = localPayoutBody(cluster.merchant);
    expect((await cluster.post(PAYOUT_PATHS.local, probe)).status).toBe(200);
    const closed = await waitFor('closed', async () => {
      const seen = await ready();
      return seen.rails.mobile_money.circuit === 'CLOSED' ? seen : undefined;
    });
    expect(Date.parse(closed.rails.mobile_money.last_success_at as string)).toBeGreaterThan(Date.now() - 30_000);
    expect(closed.rails.mobile_money.consecutive_failures).toBe(0);
    await waitFor('the probe paid', async () => ((await payoutStatus(probe.payout_reference)) === 700 ? true : undefined), 30_000);

    // The payouts accepted before the outage were kept, not lost: their next attempt (once due) pays each once.
    await cluster.query(`UPDATE rail_requests SET next_query_at = now() WHERE outcome IS NULL`);
    for (const body of held) {
      await waitFor('a held payout paid', async () => ((await payoutStatus(body.payout_reference)) === 700 ? true : undefined), 30_000);
    }
    const requests = await cluster.query<{ id: string }>(`SELECT id FROM rail_requests WHERE operation = 'B2C'`);
    for (const { id } of requests) {
      expect(cluster.daraja.transactions.filter((t) => t.operation === 'B2C' && t.originatorConversationId === id)).toHaveLength(1);
    }
  }, 150_000);
});
