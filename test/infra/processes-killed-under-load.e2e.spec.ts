import Decimal from 'decimal.js';
import Redis from 'ioredis';
import { Client } from 'pg';
import { airtimeBody, AirtimeMerchant, createAirtimeMerchant, sum } from '../support/airtime-fixtures';
import { diagnostics } from '../support/child-processes';
import { cliJson, localPayoutBody, PAYOUT_PATHS, runCli, SANDBOX } from '../support/disbursement-fixtures';
import { chargeBody, ledgerBalance, ReceivedCallback, sleep, systemBalance, waitFor } from '../support/gateway-fixtures';
import { createService, fund, moneyBody, transferBody, walletSet } from '../support/money-fixtures';
import { ProcessCluster } from '../support/process-cluster';
import { randomFrom, seededRandom } from '../support/seeded-random';

/** Kills under load, apis and workers in turn; the load runs until the last victim is back, however long that takes. */
const KILLS = 4;
const CLIENTS = 8;
const FEE = 10;
const FLOAT = '1000000';
const WALLET_FUNDS = '1000000';
/** A callback copy is only allowed again after a worker died holding it: its lease (CALLBACK_LEASE_MS) ran out. */
const CALLBACK_LEASE_MS = 8000;
/** How long Postgres holds writes back before a victim dies: what it sent meanwhile commits after, unanswered. */
const STALL_MS = 300;

type Kind = 'credit' | 'transfer' | 'charge' | 'payout' | 'airtime';

interface Request {
  kind: Kind;
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
  /** What the test expects the request to do once accepted: the outcome the sandbox number decides. */
  succeeds: boolean[];
}

interface Sent extends Request {
  status: number;
  answer: Record<string, any>;
  /** Connections tried: more than one when the process answering was killed. */
  attempts: number;
  /** When the first connection failed, for a retried request. */
  cutAt?: number;
}

/**
 * The merchant's client: spreads requests over the api processes and, when the connection fails (the process was
 * killed), sends the same request, with the same reference, to the next one.
 */
class SpreadingClient {
  private turn = 0;

  constructor(private readonly urls: string[]) {}

  async send(request: Request): Promise<Sent> {
    let target = this.turn++ % this.urls.length;
    const deadline = Date.now() + 60_000;
    let cutAt: number | undefined;
    for (let attempts = 1; ; attempts += 1) {
      try {
        const res = await fetch(`${this.urls[target]}${request.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...request.headers },
          body: JSON.stringify(request.body),
          signal: AbortSignal.timeout(30_000),
        });
        return { ...request, status: res.status, answer: (await res.json()) as Record<string, any>, attempts, cutAt };
      } catch (error) {
        cutAt ??= Date.now();
        if (Date.now() > deadline) throw new Error(`a ${request.kind} was never answered: ${(error as Error).message}`, { cause: error });
        target = (target + 1) % this.urls.length;
        await sleep(Math.min(1000, 100 * attempts));
      }
    }
  }
}

/** Accepted as the merchant reads the answer: a payout or airtime retried after its first attempt was stored is 722. */
function accepted(sent: Sent): boolean {
  if (sent.kind === 'credit' || sent.kind === 'transfer') return sent.status === 201 || sent.status === 200;
  if (sent.kind === 'charge') return sent.status === 200;
  return sent.status === 200 || (sent.attempts > 1 && sent.status === 409 && sent.answer.response_code === 722);
}

const reference = (sent: Request): string =>
  sent.body.source_transaction_id ?? sent.body.external_reference ?? sent.body.payout_reference ?? sent.body.reference;

/**
 * Issue 21 §1: two api and two worker processes on one Postgres and one Redis, under a seeded load of wallet credits
 * and transfers, charges, payouts and airtime, while a killer SIGKILLs an api or a worker every 5–10 s (four kills) and starts it
 * again. The client retries a request cut by a kill on the other api with the same reference. Afterwards every
 * accepted request has exactly one outcome and moved its money once (balances equal the test's own sums), every
 * hold has one outcome, every callback arrived under one event id (a copy again only after a worker died holding
 * it), every outbox job finished, and the ledger verifies.
 */
describe('two api and two worker processes, killed under load (seeded)', () => {
  const random = seededRandom('KILL_SEED', 'Kill test');
  const killRandom = randomFrom(random.seed + 1);
  const cluster = new ProcessCluster();
  let merchant: AirtimeMerchant;
  let noFee: string;
  let wallets: string[];

  beforeAll(async () => {
    await cluster.launch({
      apis: 2,
      workers: 2,
      env: () => ({
        SANDBOX_SETTLE_DELAY_MS: '100',
        CALLBACK_RETRY_DELAYS_MS: '500,1000,1500,3000,6000',
        CALLBACK_LEASE_MS: String(CALLBACK_LEASE_MS),
        // A job that died with its worker is relayed again soon, and payouts stuck at the rail are asked about soon.
        OUTBOX_LOST_JOB_AFTER_MS: '3000',
        PAYOUT_RECONCILE_AFTER_MS: '3000',
      }),
    });
    merchant = await createAirtimeMerchant(cluster.setup, cluster.receiver, { float: FLOAT });
    noFee = await createService(cluster.setup, merchant.tenant);
    const set = await walletSet(cluster.setup, merchant.tenant);
    wallets = [await set.create(), await set.create()];
    for (const wallet of wallets) await fund(cluster.setup, merchant.tenant, wallet, WALLET_FUNDS);
  }, 180_000);

  afterAll(async () => cluster.close(), 60_000);

  const amount = (min: number, max: number) => new Decimal(random.between(min * 100, max * 100)).div(100).toFixed(2);

  /** The next request of the load; drawn in sequence, so a seed replays the same requests. */
  function nextRequest(): Request {
    const wallet = { authorization: merchant.tenant.auth };
    const gateway = { 'x-access-token': merchant.token };
    const ok = () => random.next() < 0.8;
    const kind = random.pick<Kind>([
      [3, 'credit'],
      [3, 'transfer'],
      [3, 'charge'],
      [3, 'payout'],
      [1, 'airtime'],
    ]);
    switch (kind) {
      case 'credit':
        return {
          kind,
          path: '/api/v1/transactions?command=CREDIT',
          headers: wallet,
          body: moneyBody(merchant.tenant, wallets[random.between(0, 1)], noFee, amount(1, 200)),
          succeeds: [true],
        };
      case 'transfer': {
        const from = random.between(0, 1);
        return {
          kind,
          path: '/api/v1/account-transfers',
          headers: wallet,
          body: transferBody(merchant.tenant, wallets[from], wallets[1 - from], noFee, amount(1, 200)),
          succeeds: [true],
        };
      }
      case 'charge': {
        const paid = ok();
        return {
          kind,
          path: '/v1/mobile-money/charge',
          headers: gateway,
          body: chargeBody(merchant, {
            amount: amount(20, 500),
            payer_msisdn: paid ? SANDBOX.mobile.ok : SANDBOX.mobile.failed,
            callback_url: cluster.receiver.url(),
          }),
          succeeds: [paid],
        };
      }
      case 'payout': {
        const paid = ok();
        const number = paid ? SANDBOX.mobile.ok : SANDBOX.mobile.failed;
        const sum = amount(1, 300);
        return {
          kind,
          path: PAYOUT_PATHS.local,
          headers: gateway,
          body: localPayoutBody(merchant, {
            recipient_phone_number: number,
            recipient_account_number: number,
            sender_amount: sum,
            recipient_amount: sum,
            callback_url: cluster.receiver.url(),
          }),
          succeeds: [paid],
        };
      }
      case 'airtime': {
        // Distinct numbers, the sandbox's failing one at most once: a recipient's callback is known by its number.
        const succeeds = Array.from({ length: random.between(1, 3) }, (_, i) => i > 0 || ok());
        const recipients = succeeds.map((paid, i) => ({
          phone_number: paid ? `25471234560${i}` : SANDBOX.mobile.failed,
          amount: String(random.between(10, 50)),
        }));
        return {
          kind,
          path: '/v1/gw/airtime/send',
          headers: gateway,
          body: airtimeBody(recipients, { service_code: merchant.serviceCode }),
          succeeds,
        };
      }
    }
  }

  it('every accepted request has one outcome and moved its money once; every callback arrives; the ledger verifies', async () => {
    const client = new SpreadingClient(cluster.apiUrls);
    const sent: Sent[] = [];
    const kills: Array<{ name: string; at: number }> = [];
    let killing = true;

    // A kill every 5–10 s, apis and workers in turn, one process down at a time: the other api always serves. Each
    // victim dies while Postgres holds writes back (a SHARE lock on the tables every money path writes), so work it
    // sent is still in Postgres when it dies and commits after: answers lost, the case a retry must meet as a replay.
    const killer = (async () => {
      for (let n = 0, last = Date.now(); n < KILLS; n += 1) {
        await sleep(last + killRandom.between(5000, 10000) - Date.now());
        const pool = n % 2 === 0 ? cluster.apis : cluster.workers;
        const victim = pool[killRandom.between(0, pool.length - 1)];
        last = Date.now();
        kills.push({ name: victim.name, at: last });
        const stall = await stallWrites(cluster.db.url);
        await sleep(STALL_MS);
        await cluster.crashAndRestart(victim, () => stall.end());
        await cluster.ready();
      }
    })().finally(() => (killing = false));
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (killing) {
          sent.push(await client.send(nextRequest()));
          await sleep(50);
        }
      }),
    );
    await killer;
    await cluster.ready();

    const query = (sql: string, params: unknown[] = []) => cluster.query(sql, params);
    const clientId = merchant.clientId;
    // A retried request whose first attempt committed before the cut: its retry had to be answered as a replay.
    const retried = sent.filter((s) => s.attempts > 1);
    const storedAt: Array<{ ref: string; at: Date }> = await query(
      `SELECT source_transaction_id AS ref, created_at AS at FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = ANY($2)
       UNION ALL SELECT external_reference, created_at FROM payments WHERE client_id = $1 AND external_reference = ANY($2)
       UNION ALL SELECT payout_reference, created_at FROM payouts WHERE client_id = $1 AND payout_reference = ANY($2)
       UNION ALL SELECT reference, created_at FROM airtime_requests WHERE client_id = $1 AND reference = ANY($2)`,
      [clientId, retried.map(reference)],
    );
    const replayed = retried.filter((s) => storedAt.some((row) => row.ref === reference(s) && row.at.getTime() < s.cutAt!));
    process.stdout.write(
      `Kill test seed ${random.seed}: ${sent.length} requests, ${retried.length} retried on the other api, ` +
        `${replayed.length} of them stored before the cut (${replayed.map((s) => s.kind).join(' ')}); ` +
        `kills: ${kills.map((k) => k.name).join(', ')}\n`,
    );
    expect(sent.filter((s) => !accepted(s)).map((s) => ({ kind: s.kind, status: s.status, answer: s.answer }))).toEqual([]);
    expect(kills).toHaveLength(KILLS);
    expect(replayed.length).toBeGreaterThan(0);

    const of = (kind: Kind) => sent.filter((s) => s.kind === kind);
    const charges = of('charge');
    const payouts = of('payout');
    const airtime = of('airtime');
    const recipients = airtime.flatMap((s) =>
      s.body.recipients.map((r: { phone_number: string; amount: string }, i: number) => ({
        ...r,
        reference: s.body.reference,
        paid: s.succeeds[i],
      })),
    );

    const recipientEvent = (r: (typeof recipients)[number]) => `${r.reference}/${r.phone_number}`;

    // Everything final and every callback in, or a report of what is missing.
    const callbackUrls = [...charges, ...payouts].map((s) => s.body.callback_url as string);
    const airtimeCallbacks = () => cluster.receiver.at(merchant.airtimeUrl!);
    const progress = async () => {
      const [row] = await query(
        `SELECT (SELECT count(*)::int FROM payments WHERE client_id = $1 AND payment_status IN (700, 701)) AS payments,
                (SELECT count(*)::int FROM payouts WHERE client_id = $1 AND status IN (700, 701)) AS payouts,
                (SELECT count(*)::int FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id
                  WHERE q.client_id = $1 AND r.service_status IN (602, 603)) AS recipients,
                (SELECT count(*)::int FROM callback_deliveries WHERE client_id = $1 AND status <> 'DELIVERED') AS undelivered,
                (SELECT count(*)::int FROM outbox WHERE done_at IS NULL) AS jobs`,
        [clientId],
      );
      return {
        ...row,
        callbacks: callbackUrls.filter((url) => cluster.receiver.at(url).length > 0).length,
        airtimeCallbacks: new Set(airtimeCallbacks().map(eventOfAirtime)).size,
      };
    };
    const done = {
      payments: charges.length,
      payouts: payouts.length,
      recipients: recipients.length,
      undelivered: 0,
      jobs: 0,
      callbacks: callbackUrls.length,
      airtimeCallbacks: recipients.length,
    };
    try {
      await waitFor(
        'everything final and every callback delivered',
        async () => JSON.stringify(await progress()) === JSON.stringify(done),
        120_000,
        500,
      );
    } catch (error) {
      throw new Error(
        `${(error as Error).message} (seed ${random.seed}): ${JSON.stringify(await progress())} of ${JSON.stringify(done)}\n` +
          diagnostics(cluster.processes),
        { cause: error },
      );
    }

    // Wallets: one operation per reference, and balances that are the test's own sums of what was accepted.
    const operations: Array<{ ref: string; kind: string; n: number }> = await query(
      `SELECT source_transaction_id AS ref, kind, count(*)::int AS n FROM wallet_operations
       WHERE client_id = $1 AND source_transaction_id IS NOT NULL GROUP BY 1, 2`,
      [clientId],
    );
    const walletSent = sent.filter((s) => s.kind === 'credit' || s.kind === 'transfer');
    expect(sortBy(operations)).toEqual(sortBy(walletSent.map((s) => ({ ref: reference(s), kind: s.kind.toUpperCase(), n: 1 }))));
    const expectedWallets = wallets.map((wallet) =>
      walletSent
        .reduce((total, { kind, body }) => {
          const value = new Decimal(body.transaction_amount);
          if (kind === 'credit') return body.account_number === wallet ? total.plus(value) : total;
          if (body.source_account_number === wallet) return total.minus(value);
          return body.destination_account_number === wallet ? total.plus(value) : total;
        }, new Decimal(WALLET_FUNDS))
        .toFixed(4),
    );
    expect(await Promise.all(wallets.map((w) => ledgerBalance(cluster.setup, w)))).toEqual(expectedWallets);

    // Charges: one payment per reference, settled as the payer's number decides, one collection entry when paid.
    const payments: Array<{ ref: string; status: number; entry: string | null }> = await query(
      `SELECT external_reference AS ref, payment_status AS status, entry_id AS entry FROM payments WHERE client_id = $1`,
      [clientId],
    );
    expect(sortBy(payments.map(({ ref, status, entry }) => ({ ref, status, entered: entry !== null })))).toEqual(
      sortBy(charges.map((s) => ({ ref: reference(s), status: s.succeeds[0] ? 700 : 701, entered: s.succeeds[0] }))),
    );
    expect(new Set(payments.map((p) => p.entry).filter(Boolean)).size).toBe(charges.filter((s) => s.succeeds[0]).length);

    // Payouts: one per reference, each hold with exactly one outcome, matching the payout's status.
    const payoutRows: Array<{ ref: string; status: number; hold: string; outcome: string | null }> = await query(
      `SELECT p.payout_reference AS ref, p.status, h.status AS hold, h.outcome_entry_id AS outcome
       FROM payouts p JOIN float_holds h ON h.client_id = p.client_id AND h.id = p.hold_id WHERE p.client_id = $1`,
      [clientId],
    );
    expect(sortBy(payoutRows.map(({ ref, status, hold }) => ({ ref, status, hold })))).toEqual(
      sortBy(payouts.map((s) => ({ ref: reference(s), status: s.succeeds[0] ? 700 : 701, hold: s.succeeds[0] ? 'SETTLED' : 'RELEASED' }))),
    );
    expect(new Set(payoutRows.map((p) => p.outcome).filter(Boolean)).size).toBe(payouts.length);

    // Airtime: one request per reference, each recipient final once, its hold with one outcome.
    const airtimeRows: Array<{ ref: string; phone: string; status: number; hold: string; outcome: string | null }> = await query(
      `SELECT q.reference AS ref, r.phone_number AS phone, r.service_status AS status, h.status AS hold, h.outcome_entry_id AS outcome
       FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id
       WHERE q.client_id = $1`,
      [clientId],
    );
    expect(sortBy(airtimeRows.map(({ ref, phone, status, hold }) => ({ ref: `${ref}/${phone}`, status, hold })))).toEqual(
      sortBy(
        recipients.map((r) => ({
          ref: recipientEvent(r),
          status: r.paid ? 602 : 603,
          hold: r.paid ? 'SETTLED' : 'RELEASED',
        })),
      ),
    );
    expect(new Set(airtimeRows.map((r) => r.outcome).filter(Boolean)).size).toBe(recipients.length);

    // The float: paid charges in (net of the fee), paid payouts and airtime out with their fees; fee income the fees.
    const paidCharges = charges.filter((s) => s.succeeds[0]);
    const paidPayouts = payouts.filter((s) => s.succeeds[0]);
    const paidRecipients = recipients.filter((r) => r.paid);
    const float = new Decimal(FLOAT)
      .plus(sum(paidCharges.map((s) => new Decimal(s.body.amount).minus(FEE))))
      .minus(sum(paidPayouts.map((s) => new Decimal(s.body.sender_amount).plus(FEE))))
      .minus(sum(paidRecipients.map((r) => new Decimal(r.amount).plus(FEE))));
    expect(await ledgerBalance(cluster.setup, merchant.settlementAccountNumber)).toBe(float.toFixed(4));
    expect(await systemBalance(cluster.setup, clientId, 'FEE_INCOME')).toBe(
      new Decimal(FEE).times(paidCharges.length + paidPayouts.length + paidRecipients.length).toFixed(4),
    );

    // Callbacks: one event id per event; a copy again only after a worker was killed while it could hold it.
    const workerKills = kills.filter((k) => k.name.startsWith('worker-')).map((k) => k.at);
    const expectOneEvent = (event: string, copies: ReceivedCallback[]) => {
      expect({ event, ids: new Set(copies.map((c) => c.headers['x-event-id'])).size }).toEqual({ event, ids: 1 });
      for (let i = 1; i < copies.length; i += 1) {
        const [first, again] = [copies[i - 1].at, copies[i].at];
        expect({ event, again: workerKills.some((at) => at > first - CALLBACK_LEASE_MS && at < again) }).toEqual({ event, again: true });
      }
    };
    for (const s of [...charges, ...payouts]) expectOneEvent(reference(s), cluster.receiver.at(s.body.callback_url));
    const byRecipient = new Map<string, ReceivedCallback[]>();
    for (const copy of airtimeCallbacks()) byRecipient.set(eventOfAirtime(copy), [...(byRecipient.get(eventOfAirtime(copy)) ?? []), copy]);
    for (const [event, copies] of byRecipient) expectOneEvent(event, copies);
    // Each told the outcome the merchant's status query shows.
    const told = (s: Sent) => {
      const body = cluster.receiver.at(s.body.callback_url)[0].body as Record<string, any>;
      return s.kind === 'charge' ? Number(body.payment_status) : body.data.payment_status;
    };
    expect([...charges, ...payouts].map((s) => ({ ref: reference(s), told: told(s) }))).toEqual(
      [...charges, ...payouts].map((s) => ({ ref: reference(s), told: s.succeeds[0] ? 700 : 701 })),
    );
    expect(recipients.map((r) => ({ ref: recipientEvent(r), told: byRecipient.get(recipientEvent(r))![0].body.service_status }))).toEqual(
      recipients.map((r) => ({ ref: recipientEvent(r), told: r.paid ? 602 : 603 })),
    );
    const [deliveries] = await query(`SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1`, [clientId]);
    expect(deliveries.n).toBe(charges.length + payouts.length + recipients.length);
    const copies = cluster.receiver.received.length - deliveries.n;

    // Every outbox row's work finished at least once: claimed work is marked done by the worker that did it (a worker
    // killed before its mark leaves the row to be claimed again after OUTBOX_LOST_JOB_AFTER_MS, and then marked), and
    // relayed work completed in BullMQ. Work offered again after a kill ran without a second effect (checked above).
    type OutboxRow = { job_key: string; relay_count: number; done: boolean };
    const completedInBullmq = async (): Promise<Set<string>> => {
      const redis = new Redis(cluster.redisUrl);
      try {
        return new Set(await redis.zrange('bull:payments:completed', 0, -1));
      } finally {
        redis.disconnect();
      }
    };
    const finished = (row: OutboxRow, completed: Set<string>) =>
      row.done || Array.from({ length: row.relay_count + 1 }, (_, n) => `outbox-${row.job_key}-${n}`).some((id) => completed.has(id));
    const outbox = await waitFor(
      'every outbox row to be done',
      async () => {
        const rows: OutboxRow[] = await query(`SELECT job_key, relay_count, done_at IS NOT NULL AS done FROM outbox`);
        const completed = await completedInBullmq();
        return rows.every((row) => finished(row, completed)) ? rows : undefined;
      },
      20_000,
      500,
    );
    process.stdout.write(
      `Kill test seed ${random.seed}: ${outbox.length} outbox rows, ${outbox.filter((row) => row.relay_count > 0).length} offered again ` +
        `after a kill or a failure; ${copies} callback copies repeated after a worker kill\n`,
    );

    const report = cliJson(await runCli(cluster.db.url, 'ledger:verify', '--json'));
    expect(report.ok).toBe(true);
  }, 240_000);
});

/**
 * Holds writes to entries and the outbox back (SHARE locks on both tables, taken one after the other). A transaction
 * that has written one and waits for the other deadlocks with it; Postgres then aborts the stall, which is tried
 * again, so the writes are held back all the same.
 */
async function stallWrites(url: string): Promise<Client> {
  for (;;) {
    const stall = new Client({ connectionString: url });
    await stall.connect();
    try {
      await stall.query('BEGIN; LOCK TABLE journal_entries, outbox IN SHARE MODE');
      return stall;
    } catch (error) {
      await stall.end();
      if ((error as { code?: string }).code !== '40P01') throw error;
    }
  }
}

function eventOfAirtime(callback: ReceivedCallback): string {
  return `${callback.body.external_reference}/${callback.body.phone_number}`;
}

function sortBy<T extends { ref: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}
