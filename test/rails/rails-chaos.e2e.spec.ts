import Decimal from 'decimal.js';
import { AirtimeProcessingService, AirtimeResolutionError } from '../../src/airtime/airtime-processing.service';
import { transferReference } from '../../src/rails/jenga/jenga-gateway';
import { AfricasTalkingCallPlan, AfricasTalkingRecipientPlan } from '../support/africastalking-stub';
import { airtimeBody, airtimeMoney, FINAL } from '../support/airtime-fixtures';
import { diagnostics } from '../support/child-processes';
import { DarajaOperation, DarajaPlan } from '../support/daraja-stub';
import { localPayoutBody, PAYOUT_PATHS } from '../support/disbursement-fixtures';
import { chargeBody, GatewayMerchant, ledgerBalance, sleep, waitFor } from '../support/gateway-fixtures';
import { finalState, JengaPlan } from '../support/jenga-stub';
import { ledgerViolations } from '../support/money-fixtures';
import { workerStarted } from '../support/process-cluster';
import { RailsCluster } from '../support/rails-cluster';
import { seededRandom } from '../support/seeded-random';

const CHARGES = 30;
const PAYOUTS = 30;
const BANK_PAYOUTS = 15;
/** Bulk airtime requests of 5 to 20 recipients each (one Africa's Talking call each, its batch being 25). */
const AIRTIME_REQUESTS = 5;
const AIRTIME_FEE = 10;
const FLOAT = '1000000';
const KILLS = 4;

/**
 * Issues 18 and 19's seeded chaos: charges and payouts through the M-Pesa adapter while the Daraja stub answers with
 * random faults (busy, 500s and time-outs after taking the request, late, duplicate, lost and queue-timed-out results,
 * failures), BANK payouts through the Jenga adapter while the Jenga stub does the same (busy, 500s and time-outs after
 * taking the transfer, pending transfers settled later, failures), bulk airtime through the Africa's Talking adapter
 * while its stub does the same (busy, 401, refused calls, 500s and time-outs after taking or not taking the top-ups;
 * per number: failed at send or later, callbacks late, twice, contradicting, early or never), and the worker processes
 * are killed and restarted. The faults may open a rail's circuit: a request refused meanwhile gets the outage answer
 * and leaves nothing stored. Afterwards every accepted payment, payout and airtime recipient is final, every hold has
 * exactly one outcome, no B2C, PesaLink transfer or top-up was taken twice, every merchant callback was delivered,
 * the airtime float is exact and the ledger invariants hold. Pushes and top-ups whose send answer was lost (never
 * sent again) are jammed after a day: the pushes stay jammed, the top-ups are resolved as an operator would
 * (airtime:resolve, from Africa's Talking's records).
 */
describe("M-Pesa, Jenga and Africa's Talking under chaos (seeded)", () => {
  const random = seededRandom('CHAOS_SEED', 'Rails chaos');
  const { seed, pick } = random;
  const cluster = new RailsCluster();

  beforeAll(async () => {
    cluster.daraja.plan = (operation) => planFor(operation);
    cluster.jenga.plan = () => bankPlan();
    cluster.africastalking.callPlan = (recipients, idempotencyKey) => airtimeCallPlan(recipients, idempotencyKey);
    cluster.africastalking.plan = () => topUpPlan();
    await cluster.start(2, { RAIL_CIRCUIT_COOLDOWN_MS: '1000' }, { airtime: true });
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

  /**
   * Faults for one PesaLink transfer, and what Jenga's status query answers about it after ("Query Transaction
   * Details"): paid at once, or pending and then paid or failed, with its send answer kept, lost (500) or timed out.
   */
  function bankPlan(): JengaPlan {
    const status = pick<JengaPlan['status']>([
      [6, 'SUCCESS'],
      [4, 'PENDING'],
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
      states:
        status === 'PENDING'
          ? pick([
              [5, ['Pending', 'Success']],
              [5, ['Pending', 'Pending', 'Failed']],
            ])
          : ['Success'],
    };
  }

  /** The faults of every Africa's Talking send call, in order (for the seed's summary). */
  const airtimeFaults: string[] = [];

  /**
   * Faults for one airtime send call; a call sending a number again (it was busy) is refused or 401'd no more, and
   * the repeat of a call whose answer was lost (its key again) is answered: taken now, or a duplicate.
   */
  function airtimeCallPlan(recipients: { phoneNumber: string }[], idempotencyKey: string): AfricasTalkingCallPlan {
    if (cluster.africastalking.sends.filter((call) => call.idempotencyKey === idempotencyKey).length > 1) {
      airtimeFaults.push('repeat');
      return {};
    }
    const again = recipients.some((r) => cluster.africastalking.sentTo(r.phoneNumber) > 1);
    const fault = pick<NonNullable<AfricasTalkingCallPlan['fault']>>([
      [again ? 8 : 5, 'none'],
      [1, 'busy'],
      [again ? 0 : 1, 'unauthorized'],
      [again ? 0 : 1, 'refuse'],
      [1, 'http500'],
      [1, 'timeout'],
    ]);
    const taken = pick([
      [3, true],
      [1, false],
    ]);
    airtimeFaults.push(fault === 'http500' || fault === 'timeout' ? `${fault}${taken ? '' : ' (not taken)'}` : fault);
    return { fault, taken };
  }

  /** How Africa's Talking treats one top-up it takes. */
  function topUpPlan(): AfricasTalkingRecipientPlan {
    return {
      // A number refused at send is answered with requestId "None", each of them.
      sent: pick([
        [8, 'Sent' as const],
        [2, 'Failed' as const],
      ]),
      final: pick([
        [8, 'Success' as const],
        [2, 'Failed' as const],
      ]),
      callback: pick<AfricasTalkingRecipientPlan['callback']>([
        [5, 'once'],
        [2, 'twice'],
        [1, 'contradicting'],
        [1, 'early'],
        [1, 'never'],
      ]),
      delayMs: pick([
        [3, 0],
        [1, Math.floor(random.next() * 2500)],
      ]),
      // The API reference's callback (requestId and status, form-encoded) or the help centre's fuller one.
      callbackShape: pick([
        [1, 'documented' as const],
        [1, 'full' as const],
      ]),
    };
  }

  const query = (sql: string, params: unknown[] = []) => cluster.query(sql, params);

  /** Each airtime recipient of the merchant, with its hold and its rail request. */
  const airtimeRecipients = (): Promise<
    Array<{
      id: string;
      reference: string;
      phone_number: string;
      amount: string;
      service_status: number;
      hold: string;
      outcome_entry_id: string | null;
      rail_request_id: string | null;
      lost: boolean;
    }>
  > =>
    query(
      `SELECT r.id, q.reference, r.phone_number, r.amount, r.service_status, h.status AS hold, h.outcome_entry_id,
              rr.id AS rail_request_id,
              (r.service_status IN (601, 604) AND rr.outcome IS NULL AND rr.operator_request_id IS NULL
                AND rr.state IN ('SENDING', 'UNKNOWN') AND rr.created_at < now() - interval '10 seconds') AS lost
       FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id
       LEFT JOIN rail_requests rr ON rr.subject_kind = 'AIRTIME' AND rr.subject_id = r.id::text
       WHERE q.client_id = $1 ORDER BY r.id`,
      [cluster.airtimeMerchant!.clientId],
    );

  it('every request ends once or is refused storing nothing, every hold has one outcome, nothing is taken twice, every callback arrives', async () => {
    const { merchant, receiver, daraja, jenga, africastalking, workers } = cluster;
    const airtimeMerchant = cluster.airtimeMerchant!;
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
    const airtime = Array.from({ length: AIRTIME_REQUESTS }, (_, request) =>
      airtimeBody(
        Array.from({ length: 5 + Math.floor(random.next() * 16) }, (_, i) => ({
          phone_number: `2547${20_000_000 + request * 100 + i}`,
          amount: `${10 + Math.floor(random.next() * 90)}.${random.next() < 0.5 ? '00' : '50'}`,
        })),
        { service_code: airtimeMerchant.serviceCode },
      ),
    );
    /** Sends each request: accepted (200), or refused by an open circuit (503) in its interface's outage answer. */
    const send = (path: string, bodies: Array<Record<string, unknown>>, outage: Record<string, unknown>, as: GatewayMerchant = merchant) =>
      Promise.all(
        bodies.map(async (body) => {
          const res = await cluster.post(path, body, as);
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
      send(
        '/v1/gw/airtime/send',
        airtime,
        { response_code: 721, error_code: 'FAILED', message: expect.stringMatching(/Africa's Talking/) },
        airtimeMerchant,
      ),
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

    const [sentCharges, sentPayouts, sentBank, sentAirtime] = await sending;
    const accepted = <T extends { accepted: boolean; body: Record<string, unknown> }>(sent: T[]) =>
      sent.filter((s) => s.accepted).map((s) => s.body);
    const [acceptedCharges, acceptedPayouts, acceptedBank] = [accepted(sentCharges), accepted(sentPayouts), accepted(sentBank)];
    const refused = [...sentCharges, ...sentPayouts, ...sentBank].filter((s) => !s.accepted).map((s) => s.body);
    const acceptedAirtime = accepted(sentAirtime);
    const refusedAirtime = sentAirtime.filter((s) => !s.accepted).map((s) => s.body.reference);
    const recipientCount = acceptedAirtime.reduce((n, body) => n + (body.recipients as unknown[]).length, 0);
    process.stdout.write(
      `Rails chaos seed ${seed}: ${refused.length + refusedAirtime.length} request(s) refused while a circuit was open\n`,
    );
    // A refused request left nothing behind.
    const [left] = await query(
      `SELECT (SELECT count(*)::int FROM payments WHERE client_id = $1 AND external_reference = ANY($2)) +
              (SELECT count(*)::int FROM payouts WHERE client_id = $1 AND payout_reference = ANY($3)) +
              (SELECT count(*)::int FROM airtime_requests WHERE client_id = $4 AND reference = ANY($5)) AS n`,
      [
        merchant.clientId,
        refused.map((b) => b.external_reference).filter(Boolean),
        refused.map((b) => b.payout_reference).filter(Boolean),
        airtimeMerchant.clientId,
        refusedAirtime,
      ],
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
      const recipients = await airtimeRecipients();
      return {
        ...(row as { payments: number; payouts: number }),
        unknowable: (await unknowable()).length,
        airtime: recipients.filter((r) => FINAL.includes(r.service_status)).length,
        airtimeLost: recipients.filter((r) => r.lost).length,
      };
    };
    try {
      await waitFor(
        'every payment and payout final',
        async () => {
          const counts = await finalCounts();
          return counts.payments + counts.unknowable === acceptedCharges.length &&
            counts.payouts === payoutCount &&
            counts.airtime + counts.airtimeLost === recipientCount
            ? counts
            : undefined;
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

    // A top-up sent again (its first call not taken) is SENDING while that call is out, at most its 2 s time-out: it
    // is lost only if it stays so.
    const lostIds = async () =>
      (await airtimeRecipients())
        .filter((r) => r.lost)
        .map((r) => r.id)
        .join();
    await waitFor(
      'the lost top-ups to stay lost',
      async () => {
        const before = await lostIds();
        await sleep(3000);
        const counts = await finalCounts();
        return before === (await lostIds()) && counts.airtime + counts.airtimeLost === recipientCount ? true : undefined;
      },
      60_000,
      0,
    );
    // A top-up whose send answer was lost has no requestId to ask by: still processing, its hold still held.
    const lostTopUps = (await airtimeRecipients()).filter((r) => r.lost);
    for (const r of lostTopUps) expect([r.service_status, r.hold]).toEqual([601, 'HELD']);
    const sentBeforeJam = lostTopUps.map((r) => africastalking.sentTo(r.phone_number));
    process.stdout.write(
      `Rails chaos seed ${seed}: airtime ${recipientCount} recipient(s) accepted, calls ${JSON.stringify(airtimeFaults)}, ` +
        `${lostTopUps.length} top-up(s) whose answer was lost\n`,
    );

    // A day passes for the pushes M-Pesa never took and the top-ups whose answer was lost: they are jammed (704, 604),
    // never sent again.
    const lost = await unknowable();
    if (lost.length + lostTopUps.length) {
      await query(`UPDATE rail_requests SET created_at = now() - interval '25 hours', next_query_at = now() WHERE id = ANY($1)`, [
        [...lost, ...lostTopUps.map((r) => r.rail_request_id)],
      ]);
      await waitFor(
        'the lost pushes and top-ups jammed',
        async () =>
          (await query(`SELECT count(*)::int AS n FROM payments WHERE client_id = $1 AND payment_status = 704`, [merchant.clientId]))[0]
            .n === lost.length && (await airtimeRecipients()).filter((r) => r.service_status === 604).length === lostTopUps.length
            ? true
            : undefined,
        30_000,
        250,
      );
    }
    // The operator resolves each jammed top-up from Africa's Talking's records (airtime:resolve), once.
    const operator = cluster.setup.get(AirtimeProcessingService);
    for (const r of lostTopUps) {
      const outcome = africastalking.topUpOf(r.phone_number)?.final === 'Success' ? 'SUCCESSFUL' : 'FAILED';
      expect((await operator.resolveByOperator(airtimeMerchant.clientId, r.reference, r.phone_number, outcome)).service_status).toBe(
        outcome === 'SUCCESSFUL' ? 602 : 603,
      );
      await expect(operator.resolveByOperator(airtimeMerchant.clientId, r.reference, r.phone_number, outcome)).rejects.toThrow(
        AirtimeResolutionError,
      );
    }
    expect(lostTopUps.map((r) => africastalking.sentTo(r.phone_number))).toEqual(sentBeforeJam);

    // Each payout's hold has exactly one outcome, matching the payout's status.
    const holds: Array<{ status: number; hold_status: string; outcome_entry_id: string | null; id: string }> = await query(
      `SELECT p.id, p.status, h.status AS hold_status, h.outcome_entry_id FROM payouts p JOIN float_holds h ON h.client_id = p.client_id AND h.id = p.hold_id
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
      expect(statusOf(subject_id)).toBe(finalState(taken[0]) === 'Success' ? 700 : 701);
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

    const appliedStatus = async (requestId: string): Promise<string | undefined> =>
      (
        await query(
          `SELECT payload->>'status' AS status FROM rail_callbacks
           WHERE rail = 'africastalking' AND effect = 'APPLIED' AND payload->>'requestId' = $1`,
          [requestId],
        )
      )[0]?.status;
    // Each airtime recipient is final, as Africa's Talking decided, its hold with exactly one outcome; no number was
    // topped up twice; the float paid exactly the delivered airtime and its fees.
    const recipients = await airtimeRecipients();
    expect(recipients).toHaveLength(recipientCount);
    for (const r of recipients) {
      expect([r.service_status, r.hold]).toEqual([r.service_status, r.service_status === 602 ? 'SETTLED' : 'RELEASED']);
      expect(FINAL).toContain(r.service_status);
      expect(r.outcome_entry_id).not.toBeNull();
      // Every top-up of the number, with the call that took it: one at most.
      const toppedUp = africastalking.topUps
        .filter((t) => t.phoneNumber === `+${r.phone_number}`)
        .map((t) => `${t.sent} ${t.requestId} by call ${t.call} (key ${t.idempotencyKey})`);
      expect({ recipient: r.id, toppedUp }).toEqual({ recipient: r.id, toppedUp: toppedUp.slice(0, 1) });
      const topUp = africastalking.topUpOf(r.phone_number);
      // Contradicting status callbacks race each other here: the first to arrive is believed, whichever was sent first.
      const believed = topUp?.plan.callback === 'contradicting' ? ((await appliedStatus(topUp.requestId)) ?? topUp.final) : topUp?.final;
      expect(r.service_status).toBe(believed === 'Success' ? 602 : 603);
    }
    expect(new Set(recipients.map((r) => r.outcome_entry_id)).size).toBe(recipientCount);
    const delivered = recipients.filter((r) => r.service_status === 602);
    const paid = delivered.reduce((total, r) => total.plus(r.amount).plus(AIRTIME_FEE), new Decimal(0));
    expect(await ledgerBalance(cluster.setup, airtimeMerchant.settlementAccountNumber)).toBe(new Decimal(FLOAT).minus(paid).toFixed(4));
    expect(new Decimal((await airtimeMoney(cluster.setup, airtimeMerchant)).inFlight).isZero()).toBe(true);

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
    // Each airtime recipient's result reaches the merchant's airtime endpoint as one event (redelivered at most).
    const resultsOf = (r: { reference: string; phone_number: string }) =>
      receiver
        .at(airtimeMerchant.airtimeUrl!)
        .filter((c) => c.body.external_reference === r.reference && c.body.phone_number === r.phone_number);
    await waitFor('every airtime callback', () => recipients.every((r) => resultsOf(r).length > 0), 90_000, 250).catch((error) => {
      const missing = recipients.filter((r) => resultsOf(r).length === 0);
      throw new Error(`${(error as Error).message} (seed ${seed}): ${missing.length} missing`, { cause: error });
    });
    for (const r of recipients) {
      expect(new Set(resultsOf(r).map((c) => c.headers['x-event-id'])).size).toBe(1);
      expect(resultsOf(r).map((c) => c.body.service_status)).toEqual(resultsOf(r).map(() => r.service_status));
    }
    expect(await ledgerViolations(cluster.setup)).toEqual([]);
  }, 300_000);
});
