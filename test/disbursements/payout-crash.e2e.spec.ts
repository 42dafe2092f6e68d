import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { createHttpApp } from '../../src/http-app';
import { verifySignature } from '../support/callback-signature';
import {
  createIsolatedDatabase,
  freePort,
  GatewayMerchant,
  IsolatedDatabase,
  MerchantReceiver,
  OwnRedis,
  postAsMerchant,
  startOwnRedis,
  waitFor,
  withEnv,
} from '../support/gateway-fixtures';
import {
  cliJson,
  createPayoutMerchant,
  dec,
  expectedFloat,
  localPayoutBody,
  minus,
  PAYOUT_PATHS,
  runCli,
  SANDBOX,
  SANDBOX_STATUS,
  SandboxRow,
} from '../support/disbursement-fixtures';
import { Child, diagnostics, killChild, startChild, stopChild } from '../support/child-processes';
import { dataSource } from '../support/test-app';

/** The mix of payouts: row → how many. Amounts vary per payout so a wrong sum cannot hide. */
const MIX: Array<[SandboxRow, number]> = [
  ['ok', 50],
  ['failed', 10],
  ['pending', 10],
  ['jammed', 10],
];
const SETTLE_DELAY_MS = 1000;

/**
 * A worker killed mid-settlement (issue 9 "Tests"; provider contract §1, §3): an `api` process and a `worker`
 * process settle a mix of payouts; the worker is killed with SIGKILL while payouts are at the rail, and another
 * worker is started. Afterwards every hold has exactly one outcome (HELD only for 703/704 payouts, one settle or
 * release entry per resolved hold), the float is exact and the ledger verifies.
 */
describe('payouts survive a worker killed mid-settlement', () => {
  let redis: OwnRedis;
  let db: IsolatedDatabase;
  let restoreEnv: () => void;
  let setup: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let api: Child;
  const workers: Child[] = [];
  let apiUrl: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    redis = await startOwnRedis();
    db = await createIsolatedDatabase();
    restoreEnv = withEnv({ DATABASE_URL: db.url, REDIS_URL: redis.url });
    receiver = await new MerchantReceiver().start();
    // This process only prepares the merchant and reads the database: as `api` it runs no relay and no worker.
    setup = await createHttpApp('api');
    merchant = await createPayoutMerchant(setup, { float: '1000000' });

    env = {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS),
      CALLBACK_RETRY_DELAYS_MS: '500,1000,1500',
      // A job that died with its worker is relayed again soon, and stuck payouts are re-checked at the rail soon.
      OUTBOX_LOST_JOB_AFTER_MS: '3000',
      PAYOUT_RECONCILE_AFTER_MS: '3000',
      LOG_LEVEL: 'info',
      DB_POOL_SIZE: '10',
    };
    delete env.PORT;
    workers.push(startChild('worker-1', ['worker'], env));
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = startChild('api', ['api'], {
      ...env,
      PORT: String(port),
      PUBLIC_BASE_URL: apiUrl,
    });
    await waitFor(
      'the api process to serve',
      async () => (await fetch(`${apiUrl}/health/live`).catch(() => null))?.status === 200,
      60_000,
      200,
    );
    await waitFor('the worker process to start', () => workers[0].output.join('').includes('worker started'), 60_000, 200);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([api, ...workers].filter(Boolean).map((c) => stopChild(c)));
    await setup?.close();
    await receiver?.close();
    await redis?.stop();
    restoreEnv?.();
    await db?.drop();
  }, 60_000);

  const query = (sql: string, params: unknown[] = []) => dataSource(setup).query(sql, params);

  it('every hold ends with exactly one outcome, matching its payout; the float and the ledger are exact', async () => {
    const planned: Array<{ row: SandboxRow; wave: 1 | 2; body: Record<string, unknown> }> = [];
    let i = 0;
    for (const [row, count] of MIX) {
      for (let n = 0; n < count; n++, i++) {
        const amount = dec(new Decimal(100).plus(i).plus(new Decimal(i).div(10000)));
        planned.push({
          row,
          // Half of each row is sent before the kill, half while no worker runs.
          wave: n < count / 2 ? 1 : 2,
          body: localPayoutBody(merchant, {
            recipient_phone_number: SANDBOX.mobile[row],
            recipient_account_number: SANDBOX.mobile[row],
            sender_amount: amount,
            recipient_amount: amount,
            callback_url: receiver.url(),
          }),
        });
      }
    }
    // Interleave the rows so the kill hits all kinds.
    planned.sort((a, b) => String(a.body.payout_reference).localeCompare(String(b.body.payout_reference)));

    const send = (wave: 1 | 2) =>
      Promise.all(
        planned.filter((p) => p.wave === wave).map(({ body }) => postAsMerchant(apiUrl, merchant.token, PAYOUT_PATHS.local, body)),
      );
    expect((await send(1)).filter((a) => a.status !== 200)).toEqual([]);

    // Kill the worker once some payouts of the first half are final and the others at the rail or on their way to it.
    const finals = MIX.filter(([row]) => SANDBOX_STATUS[row] === 700 || SANDBOX_STATUS[row] === 701).reduce((n, [, c]) => n + c, 0);
    const finalCount = async () =>
      (await query(`SELECT count(*)::int AS n FROM payouts WHERE client_id = $1 AND status IN (700, 701)`, [merchant.clientId]))[0]
        .n as number;
    await waitFor('some payouts to be final', async () => (await finalCount()) >= 3, 60_000, 20);
    await killChild(workers[0]);
    const finalAtKill = await finalCount();
    // The second half is accepted while no worker runs, so it waits for the next one whatever the first finished.
    expect(finalAtKill).toBeLessThan(finals);
    expect((await send(2)).filter((a) => a.status !== 200)).toEqual([]);
    workers.push(startChild('worker-2', ['worker'], env));

    try {
      await waitFor('every payout to reach its final status', async () => (await finalCount()) === finals, 120_000, 250);
    } catch (error) {
      throw new Error(`${(error as Error).message} (final at kill: ${finalAtKill})\n${diagnostics([api, ...workers])}`, { cause: error });
    }
    // Work the killed worker held is offered again after its lease: wait until every submission has run, so a repeat
    // that moved money twice would show below.
    await waitFor(
      'every payout submission to be done',
      async () =>
        (
          await query(
            `SELECT count(*)::int AS n FROM outbox o JOIN payouts p ON p.client_id = o.client_id AND p.id::text = o.payload->>'payoutId'
             WHERE o.topic = 'payouts.process' AND o.done_at IS NULL AND p.client_id = $1`,
            [merchant.clientId],
          )
        )[0].n === 0,
      60_000,
      250,
    );

    // Each payout has the status of its sandbox row.
    const rows: Array<{
      payout_reference: string;
      status: number;
      hold_status: string;
      amount: string;
      fee: string;
      outcome_entry_id: string | null;
    }> = await query(
      `SELECT p.payout_reference, p.status, h.status AS hold_status, h.amount, h.fee, h.outcome_entry_id
         FROM payouts p JOIN float_holds h ON h.client_id = p.client_id AND h.id = p.hold_id WHERE p.client_id = $1`,
      [merchant.clientId],
    );
    expect(rows).toHaveLength(planned.length);
    const byRef = new Map(rows.map((r) => [r.payout_reference, r]));
    for (const { row, body } of planned) {
      const stored = byRef.get(body.payout_reference as string)!;
      const expectedHold = {
        700: 'SETTLED',
        701: 'RELEASED',
        703: 'HELD',
        704: 'HELD',
      }[SANDBOX_STATUS[row]];
      expect({
        ref: body.payout_reference,
        status: stored.status,
        hold: stored.hold_status,
        amount: dec(stored.amount),
      }).toEqual({
        ref: body.payout_reference,
        status: SANDBOX_STATUS[row],
        hold: expectedHold,
        amount: body.sender_amount,
      });
    }

    // Exactly one outcome entry per resolved hold, none for a held one; one reserve entry per payout.
    const resolved = rows.filter((r) => r.hold_status !== 'HELD');
    expect(new Set(resolved.map((r) => r.outcome_entry_id)).size).toBe(resolved.length);
    expect(rows.filter((r) => r.hold_status === 'HELD').every((r) => r.outcome_entry_id === null)).toBe(true);
    const kinds = await query(`SELECT kind, count(*)::int AS n FROM journal_entries WHERE client_id = $1 GROUP BY kind ORDER BY kind`, [
      merchant.clientId,
    ]);
    expect(kinds).toEqual([
      { kind: 'FLOAT_RELEASE', n: 10 },
      { kind: 'FLOAT_RESERVE', n: planned.length },
      { kind: 'FLOAT_SETTLE', n: 50 },
      { kind: 'WALLET_FUNDING', n: 1 },
    ]);

    // The float: successes and holds out, failures back in.
    const sumOf = (pred: (row: SandboxRow) => boolean) =>
      planned.filter((p) => pred(p.row)).reduce((s, p) => s.plus(p.body.sender_amount as string).plus(10), new Decimal(0));
    const paid = sumOf((r) => SANDBOX_STATUS[r] === 700);
    const held = sumOf((r) => SANDBOX_STATUS[r] === 703 || SANDBOX_STATUS[r] === 704);
    const res = await fetch(`${apiUrl}/v1/accounts/${merchant.settlementAccountNumber}/balance`, {
      headers: { 'x-access-token': merchant.token },
    });
    expect(await res.json()).toEqual(expectedFloat(minus('1000000', paid, held), held));

    // Every final payout was told (at least once; a retry after the crash repeats the same event id, same bytes).
    // Deliveries run after the status change, so under load the last ones may still be on their way.
    const told = planned.filter(({ row }) => SANDBOX_STATUS[row] === 700 || SANDBOX_STATUS[row] === 701);
    try {
      await waitFor(
        'every final payout’s callback',
        () => told.every(({ body }) => receiver.at(body.callback_url as string).length > 0),
        90_000,
        250,
      );
    } catch (error) {
      const missing = told
        .filter(({ body }) => receiver.at(body.callback_url as string).length === 0)
        .map(({ body }) => body.payout_reference);
      throw new Error(`${(error as Error).message}: no callback for ${missing.join(', ')}\n${diagnostics([api, ...workers])}`, {
        cause: error,
      });
    }
    for (const { row, body } of planned) {
      const calls = receiver.at(body.callback_url as string);
      if (SANDBOX_STATUS[row] === 703 || SANDBOX_STATUS[row] === 704) {
        expect(calls).toHaveLength(0);
        continue;
      }
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(new Set(calls.map((c) => c.headers['x-event-id'])).size).toBe(1);
      expect(calls[0].body.data).toMatchObject({
        payment_status: SANDBOX_STATUS[row],
      });
      for (const call of calls)
        expect(verifySignature(merchant.signingSecret, call.rawBody, call.headers['x-signature'] as string)).toBe(true);
    }

    expect(workers[1].process.exitCode).toBeNull();
    const verify = cliJson(await runCli(db.url, 'ledger:verify', '--json'));
    expect(verify.ok).toBe(true);
  }, 360_000);
});
