import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { execFile } from 'node:child_process';
import { createHttpApp } from '../../src/http-app';
import {
  chargeBody,
  CLI_JS,
  createGatewayMerchant,
  createIsolatedDatabase,
  freePort,
  GatewayMerchant,
  IsolatedDatabase,
  ledgerBalance,
  MerchantReceiver,
  OwnRedis,
  startOwnRedis,
  systemBalance,
  waitFor,
  withEnv,
} from '../support/gateway-fixtures';
import { Child, startChild, stopChild } from '../support/child-processes';
import { dataSource } from '../support/test-app';

const CHARGES = 200;
const CONCURRENCY = 20;

/**
 * Several processes on one Postgres and one Redis (provider contract §1): an `api` process and two `worker`
 * processes, all compiled (`node dist/src/main.js <role>`). Every charge settles exactly once, every callback is
 * delivered once, and the ledger invariants hold afterwards (`admin ledger:verify`).
 */
describe('engine: one api and two worker processes', () => {
  let redis: OwnRedis;
  let db: IsolatedDatabase;
  let restoreEnv: () => void;
  let setup: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let api: Child;
  let workers: Child[];
  let apiUrl: string;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    redis = await startOwnRedis();
    db = await createIsolatedDatabase();
    restoreEnv = withEnv({ DATABASE_URL: db.url, REDIS_URL: redis.url });
    receiver = await new MerchantReceiver().start();
    // This process only prepares the merchant and reads the database: as `api` it runs no relay and no worker.
    setup = await createHttpApp('api');
    merchant = await createGatewayMerchant(setup);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      APP_ENV: 'sandbox',
      SANDBOX_SETTLE_DELAY_MS: '100',
      CALLBACK_RETRY_DELAYS_MS: '500,1000,1500',
      LOG_LEVEL: 'info',
      DB_POOL_SIZE: '10',
    };
    delete env.PORT;
    workers = [startChild('worker-1', ['worker'], env), startChild('worker-2', ['worker'], env)];
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
    await waitFor('both worker processes to start', () => workers.every((w) => w.output.join('').includes('worker started')), 60_000, 200);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([api, ...(workers ?? [])].filter(Boolean).map(stopChild));
    await setup?.close();
    await receiver?.close();
    await redis?.stop();
    restoreEnv?.();
    await db?.drop();
  }, 60_000);

  function diagnostics(): string {
    return [api, ...workers].map((c) => `--- ${c.name} (exit ${c.process.exitCode})\n${c.output.join('').slice(-3000)}`).join('\n');
  }

  it(`${CHARGES} charges through the api process all settle exactly once, and the ledger verifies`, async () => {
    const urls: string[] = [];
    const references: string[] = [];
    let expectedSettlement = new Decimal(0);
    const bodies = Array.from({ length: CHARGES }, (_, i) => {
      const amount = 20 + (i % 50);
      expectedSettlement = expectedSettlement.plus(amount - 10);
      const body = chargeBody(merchant, {
        amount,
        callback_url: receiver.url(),
      });
      urls.push(body.callback_url as string);
      references.push(body.external_reference as string);
      return body;
    });

    const answers: Array<{ status: number; body: Record<string, unknown> }> = [];
    for (let i = 0; i < bodies.length; i += CONCURRENCY) {
      const batch = await Promise.all(
        bodies.slice(i, i + CONCURRENCY).map(async (body) => {
          const res = await fetch(`${apiUrl}/v1/mobile-money/charge`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-access-token': merchant.token,
            },
            body: JSON.stringify(body),
          });
          return {
            status: res.status,
            body: (await res.json()) as Record<string, unknown>,
          };
        }),
      );
      answers.push(...batch);
    }
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(new Set(answers.map((a) => a.body.charge_request_id)).size).toBe(CHARGES);

    const ids = answers.map((a) => String(a.body.charge_request_id));
    try {
      await waitFor(
        'every payment to settle and every callback to arrive',
        async () => {
          const [row] = await dataSource(setup).query(
            `SELECT count(*)::int AS n FROM payments WHERE id = ANY($1) AND payment_status = 700`,
            [ids],
          );
          return row.n === CHARGES && urls.every((u) => receiver.at(u).length > 0);
        },
        90_000,
        250,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${diagnostics()}`, {
        cause: error,
      });
    }

    // Exactly once: one journal entry per payment, the settlement wallet holds the expected sum, fee income the fees.
    const [entries] = await dataSource(setup).query(
      `SELECT count(*)::int AS payments, count(DISTINCT p.entry_id)::int AS entries,
              (SELECT count(*)::int FROM journal_entries e WHERE e.client_id = $1) AS client_entries
       FROM payments p WHERE p.client_id = $1 AND p.entry_id IS NOT NULL`,
      [merchant.clientId],
    );
    expect(entries).toEqual({
      payments: CHARGES,
      entries: CHARGES,
      client_entries: CHARGES,
    });
    expect(await ledgerBalance(setup, merchant.settlementAccountNumber)).toBe(expectedSettlement.toFixed(4));
    expect(await systemBalance(setup, merchant.clientId, 'FEE_INCOME')).toBe(new Decimal(CHARGES * 10).toFixed(4));

    // Every callback delivered once, at the first attempt, under its own event id.
    await waitFor('every delivery to be recorded', async () => {
      const [row] = await dataSource(setup).query(
        `SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1 AND status = 'DELIVERED'`,
        [merchant.clientId],
      );
      return row.n === CHARGES;
    });
    for (const url of urls) expect(receiver.at(url)).toHaveLength(1);
    expect(new Set(receiver.received.map((r) => r.headers['x-event-id'])).size).toBe(CHARGES);
    const [attempts] = await dataSource(setup).query(
      `SELECT count(*)::int AS n FROM callback_attempts a JOIN callback_deliveries d ON d.id = a.delivery_id WHERE d.client_id = $1`,
      [merchant.clientId],
    );
    expect(attempts.n).toBe(CHARGES);
    await waitFor('every outbox row to be done', async () => {
      const [row] = await dataSource(setup).query(`SELECT count(*)::int AS n FROM outbox WHERE done_at IS NULL`);
      return row.n === 0;
    });

    // All three processes are still up.
    for (const child of [api, ...workers])
      expect({ name: child.name, exit: child.process.exitCode }).toEqual({
        name: child.name,
        exit: null,
      });

    const verify = await new Promise<{
      code: number;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        process.execPath,
        [CLI_JS, 'ledger:verify', '--json'],
        {
          env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
            stdout,
            stderr,
          }),
      );
    });
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
    const report = JSON.parse(verify.stdout.trim());
    expect(report.ok).toBe(true);
    expect(report.invariants).toHaveLength(4);
    for (const invariant of report.invariants) expect(invariant.violations).toBe(0);
  }, 150_000);
});
