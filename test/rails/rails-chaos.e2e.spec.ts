import { transferReference } from '../../src/rails/jenga/jenga-gateway';
import { diagnostics } from '../support/child-processes';
import { DarajaOperation, DarajaPlan } from '../support/daraja-stub';
import { localPayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { chargeBody, sleep, waitFor } from '../support/gateway-fixtures';
import { JengaPlan } from '../support/jenga-stub';
import { workerStarted } from '../support/process-cluster';
import { RailsCluster } from '../support/rails-cluster';
import { seededRandom } from '../support/seeded-random';

const CHARGES = 30;
const PAYOUTS = 30;
const BANK_PAYOUTS = 15;
const KILLS = 4;

/**
 * Issues 18 and 19's seeded chaos: charges and payouts through the M-Pesa adapter while the Daraja stub answers with
 * random faults (busy, 500s and time-outs after taking the request, late, duplicate, lost and queue-timed-out results,
 * failures), BANK payouts through the Jenga adapter while the Jenga stub does the same (busy, 500s and time-outs after
 * taking the transfer, pending transfers settled later, failures), and the worker processes are killed and restarted.
 * The faults may open a rail's circuit: a request refused meanwhile gets the outage answer and leaves nothing stored.
 * Afterwards every accepted payment and payout is final, every hold has exactly one outcome, no B2C and no PesaLink
 * transfer was taken twice, every merchant callback was delivered, and (when the database is dropped) the ledger
 * invariants hold. Requests whose answer and callback could both be lost are left to the dedicated tests: with
 * neither, only the 24-hour jam resolves them.
 */
describe('M-Pesa and Jenga under chaos (seeded)', () => {
  const random = seededRandom('CHAOS_SEED', 'Rails chaos');
  const { seed, pick } = random;
  const cluster = new RailsCluster();

  beforeAll(async () => {
    cluster.daraja.plan = (operation) => planFor(operation);
    cluster.jenga.plan = () => bankPlan();
    await cluster.start(2, { RAIL_CIRCUIT_COOLDOWN_MS: '1000' });
  }, 180_000);

  afterAll(async () => cluster.close(), 60_000);

  /** Faults for one request. An STK push or B2B keeps at least one way to be answered (its callback). */
  function planFor(operation: DarajaOperation): DarajaPlan {
    const queryable = operation === 'B2C';
    return {
      fault: pick<DarajaPlan['fault']>([
        [6, 'none'],
        [1, 'busy'],
        [1, 'http500'],
        [1, 'timeout'],
      ]),
      taken: true,
      resultCode: pick([
        [8, '0'],
        [2, operation === 'STK_PUSH' ? '1032' : '2040'],
      ]),
      callback: pick<DarajaPlan['callback']>([
        [5, 'once'],
        [2, 'twice'],
        [queryable ? 2 : 0, 'never'],
        [queryable ? 1 : 0, 'timeout'],
      ]),
      delayMs: pick([
        [3, 0],
        [1, Math.floor(random.next() * 2500)],
      ]),
    };
  }

  /** Faults for one PesaLink transfer; a pending one settles (or fails) when asked about later. */
  function bankPlan(): JengaPlan {
    const status = pick<JengaPlan['status']>([
      [6, 'SUCCESS'],
      [2, 'FAILED'],
      [2, 'PENDING'],
    ]);
    return {
      fault: pick<JengaPlan['fault']>([
        [6, 'none'],
        [1, 'busy'],
        [1, 'http500'],
        [1, 'timeout'],
      ]),
      taken: true,
      status,
      laterStatus:
        status === 'PENDING'
          ? pick([
              [8, 'SUCCESS' as const],
              [2, 'FAILED' as const],
            ])
          : undefined,
    };
  }

  const query = (sql: string, params: unknown[] = []) => cluster.query(sql, params);

  it('every request ends once or is refused storing nothing, every hold has one outcome, nothing is taken twice, every callback arrives', async () => {
    const { merchant, receiver, daraja, jenga, workers } = cluster;
    const charges = Array.from({ length: CHARGES }, (_, i) =>
      chargeBody(merchant, { amount: String(100 + i), callback_url: receiver.url(), payer_msisdn: '254712345678' }),
    );
    const payouts = Array.from({ length: PAYOUTS }, (_, i) =>
      localPayoutBody(merchant, { sender_amount: String(200 + i), recipient_amount: String(200 + i), callback_url: receiver.url() }),
    );
    const bankPayouts = Array.from({ length: BANK_PAYOUTS }, (_, i) =>
      localPayoutBody(merchant, {
        destination_type: 'BANK',
        destination_name: 'BANK_KEN',
        recipient_account_number: `02401987${String(i).padStart(5, '0')}`,
        recipient_bank_code: '11',
        sender_amount: `${300 + i}.50`,
        recipient_amount: `${300 + i}.50`,
        callback_url: receiver.url(),
      }),
    );
    /** Sends each request: accepted (200), or refused by an open circuit (503) in its interface's outage answer. */
    const send = (path: string, bodies: Array<Record<string, unknown>>, outage: Record<string, unknown>) =>
      Promise.all(
        bodies.map(async (body) => {
          const res = await cluster.post(path, body);
          const answer = (await res.json()) as Record<string, unknown>;
          if (res.status === 503) expect(answer).toMatchObject(outage);
          else expect(res.status).toBe(200);
          return { body, accepted: res.status === 200 };
        }),
      );
    const sending = Promise.all([
      send('/v1/mobile-money/charge', charges, { status_code: 174, message: expect.stringMatching(/M-Pesa/) }),
      send(PAYOUT_PATHS.local, payouts, {
        response_code: 721,
        error_code: 'FAILED',
        response_description: expect.stringMatching(/M-Pesa/),
      }),
      send(PAYOUT_PATHS.local, bankPayouts, {
        response_code: 721,
        error_code: 'FAILED',
        response_description: expect.stringMatching(/Jenga/),
      }),
    ]);

    // Kill a started worker with SIGKILL every 1.5–3 s, four times, while work is in flight, starting another each time.
    let killing = true;
    const killer = (async () => {
      for (let kill = 1; kill <= KILLS && killing; kill += 1) {
        await sleep(1500 + Math.floor(random.next() * 1500));
        const victim = workers.find((w) => w.process.exitCode === null && w.process.signalCode === null && workerStarted(w));
        if (!victim || !killing) continue;
        await cluster.crashAndRestart(victim);
      }
    })();

    const [sentCharges, sentPayouts, sentBank] = await sending;
    const accepted = <T extends { accepted: boolean; body: Record<string, unknown> }>(sent: T[]) =>
      sent.filter((s) => s.accepted).map((s) => s.body);
    const [acceptedCharges, acceptedPayouts, acceptedBank] = [accepted(sentCharges), accepted(sentPayouts), accepted(sentBank)];
    const refused = [...sentCharges, ...sentPayouts, ...sentBank].filter((s) => !s.accepted).map((s) => s.body);
    process.stdout.write(`Rails chaos seed ${seed}: ${refused.length} request(s) refused while a circuit was open\n`);
    // A refused request left nothing behind.
    const [left] = await query(
      `SELECT (SELECT count(*)::int FROM payments WHERE client_id = $1 AND external_reference = ANY($2)) +
              (SELECT count(*)::int FROM payouts WHERE client_id = $1 AND payout_reference = ANY($3)) AS n`,
      [merchant.clientId, refused.map((b) => b.external_reference).filter(Boolean), refused.map((b) => b.payout_reference).filter(Boolean)],
    );
    expect(left.n).toBe(0);
    const payoutCount = acceptedPayouts.length + acceptedBank.length;

    // A push whose call was cut before it reached M-Pesa leaves nothing to ask about and no callback to wait for:
    // only its day's end decides it. Such pushes are counted apart, and must be ones the stub never took.
    const unknowable = async (): Promise<string[]> => {
      const rows: Array<{ id: string; subject_id: string }> = await query(
        `SELECT id, subject_id FROM rail_requests WHERE operation = 'STK_PUSH' AND outcome IS NULL AND operator_request_id IS NULL
           AND state IN ('SENDING', 'UNKNOWN') AND created_at < now() - interval '10 seconds'`,
      );
      return rows.filter((row) => !daraja.transactions.some((t) => String(t.body.CallBackURL).endsWith(`/${row.id}`))).map((row) => row.id);
    };
    const finalCounts = async () => {
      const [row] = await query(
        `SELECT (SELECT count(*)::int FROM payments WHERE client_id = $1 AND payment_status IN (700, 701)) AS payments,
                (SELECT count(*)::int FROM payouts WHERE client_id = $1 AND status IN (700, 701)) AS payouts`,
        [merchant.clientId],
      );
      return { ...(row as { payments: number; payouts: number }), unknowable: (await unknowable()).length };
    };
    try {
      await waitFor(
        'every payment and payout final',
        async () => {
          const counts = await finalCounts();
          return counts.payments + counts.unknowable === acceptedCharges.length && counts.payouts === payoutCount ? counts : undefined;
        },
        150_000,
        250,
      );
    } catch (error) {
      const states = await query(`SELECT rail, operation, state, outcome, count(*)::int FROM rail_requests GROUP BY 1, 2, 3, 4`);
      throw new Error(
        `${(error as Error).message} (seed ${seed}): ${JSON.stringify(await finalCounts())} ${JSON.stringify(states)}\n${diagnostics(cluster.processes)}`,
        {
          cause: error,
        },
      );
    } finally {
      killing = false;
      await killer;
    }

    // A day passes for the pushes M-Pesa never took: they are jammed (704), never pushed again.
    const lost = await unknowable();
    if (lost.length) {
      await query(`UPDATE rail_requests SET created_at = now() - interval '25 hours', next_query_at = now() WHERE id = ANY($1)`, [lost]);
      await waitFor(
        'the lost pushes jammed',
        async () =>
          (await query(`SELECT count(*)::int AS n FROM payments WHERE client_id = $1 AND payment_status = 704`, [merchant.clientId]))[0]
            .n === lost.length
            ? true
            : undefined,
        30_000,
        250,
      );
    }

    // Each payout's hold has exactly one outcome, matching the payout's status.
    const holds: Array<{ status: number; hold_status: string; outcome_entry_id: string | null; id: string }> = await query(
      `SELECT p.id, p.status, h.status AS hold_status, h.outcome_entry_id FROM payouts p JOIN float_holds h ON h.id = p.hold_id
       WHERE p.client_id = $1`,
      [merchant.clientId],
    );
    for (const hold of holds) {
      expect({ status: hold.status, hold: hold.hold_status }).toEqual({
        status: hold.status,
        hold: hold.status === 700 ? 'SETTLED' : 'RELEASED',
      });
      expect(hold.outcome_entry_id).not.toBeNull();
    }
    expect(new Set(holds.map((h) => h.outcome_entry_id)).size).toBe(payoutCount);
    const statusOf = (payoutId: string) => holds.find((h) => String(h.id) === payoutId)!.status;

    // M-Pesa took each payout at most once, and a paid payout exactly once with a success.
    const requests: Array<{ id: string; subject_id: string }> = await query(
      `SELECT id, subject_id FROM rail_requests WHERE operation = 'B2C'`,
    );
    expect(requests).toHaveLength(acceptedPayouts.length);
    for (const request of requests) {
      const taken = daraja.transactions.filter((t) => t.operation === 'B2C' && t.originatorConversationId === request.id);
      expect(taken.length).toBe(1);
      expect(statusOf(request.subject_id)).toBe(taken[0].resultCode === '0' ? 700 : 701);
    }
    // Jenga took each bank payout as one PesaLink transfer, never sent again once taken, paid as the bank decided.
    const transfers: Array<{ subject_id: string }> = await query(`SELECT subject_id FROM rail_requests WHERE operation = 'PESALINK'`);
    expect(transfers).toHaveLength(acceptedBank.length);
    for (const { subject_id } of transfers) {
      const taken = jenga.transfers.filter((t) => t.body.transfer.reference === transferReference(subject_id));
      expect(taken.length).toBe(1);
      expect(statusOf(subject_id)).toBe(taken[0].laterStatus === 'SUCCESS' ? 700 : 701);
    }
    expect(jenga.duplicates).toEqual([]);
    // Each payment settled as the operator decided, with one collection entry when paid.
    const payments: Array<{ id: string; payment_status: number; entry_id: string | null }> = await query(
      `SELECT id, payment_status, entry_id FROM payments WHERE client_id = $1`,
      [merchant.clientId],
    );
    expect(payments).toHaveLength(acceptedCharges.length);
    const stk = await query(`SELECT id, subject_id, operator_request_id FROM rail_requests WHERE operation = 'STK_PUSH'`);
    for (const payment of payments) {
      const request = stk.find((r: { subject_id: string }) => r.subject_id === String(payment.id));
      if (payment.payment_status === 704) {
        expect(lost).toContain(request.id);
        continue;
      }
      const pushed = daraja.transactions.filter((t) => t.operation === 'STK_PUSH' && t.checkoutRequestId === request.operator_request_id);
      expect(pushed).toHaveLength(1);
      expect(payment.payment_status).toBe(pushed[0].resultCode === '0' ? 700 : 701);
      expect(payment.entry_id !== null).toBe(payment.payment_status === 700);
    }

    // Every accepted request's merchant callback arrives.
    const jammed = new Set(
      (await query(`SELECT external_reference FROM payments WHERE payment_status = 704`)).map(
        (r: { external_reference: string }) => r.external_reference,
      ),
    );
    const urls = [
      ...acceptedCharges.filter((body) => !jammed.has(body.external_reference as string)),
      ...acceptedPayouts,
      ...acceptedBank,
    ].map((body) => body.callback_url as string);
    await waitFor('every merchant callback', () => urls.every((url) => receiver.at(url).length > 0), 90_000, 250).catch((error) => {
      const missing = urls.filter((url) => receiver.at(url).length === 0);
      throw new Error(`${(error as Error).message} (seed ${seed}): ${missing.length} missing`, { cause: error });
    });
  }, 300_000);
});
