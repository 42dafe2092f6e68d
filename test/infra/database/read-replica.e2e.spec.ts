import { Logger } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ReadReplica } from '../../../src/infra/database/read-replica';
import { EngineMetrics } from '../../../src/infra/metrics/engine-metrics';
import {
  chargeBody,
  closeTogether,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  waitFor,
  withEnv,
} from '../../support/gateway-fixtures';
import { moneyBody, post } from '../../support/money-fixtures';
import { StreamingReplica } from '../../support/read-replica';
import { binary, readWorkbook } from '../../support/statement-readers';
import { createTestApp, dataSource } from '../../support/test-app';

/** Every read meant for the replica that the primary served, by reason. */
async function skipped(app: NestFastifyApplication, reason: 'lag' | 'down'): Promise<number> {
  const metric = await app.get(EngineMetrics).registry.getSingleMetric('paygate_read_replica_skipped_total')!.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/**
 * Issue 21 item 3, provider contract §12: with DATABASE_READ_URL, statements, POST /v1/statement, wallet history and
 * the portal's lists and exports read a real streaming replica (pg_basebackup -R of the run's server). What the
 * replica served is told apart by pausing its replay: a write then shows on the primary but not on the replica.
 * `lenient` trusts the replica however far behind (DATABASE_READ_MAX_LAG_MS of 10 minutes), `strict` only within
 * one second.
 */
describe('read replica', () => {
  let replica: StreamingReplica;
  let lenient: NestFastifyApplication;
  let strict: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let cookie: string;
  let restoreEnv: (() => void) | undefined;
  const warnings = jest.spyOn(Logger.prototype, 'warn');
  const logs = jest.spyOn(Logger.prototype, 'log');

  const wallet = (app: NestFastifyApplication) => request(app.getHttpServer());
  const credit = async (app: NestFastifyApplication) =>
    (
      await post(
        app,
        merchant.tenant,
        'CREDIT',
        moneyBody(merchant.tenant, merchant.settlementAccountNumber, merchant.serviceCode, 500),
      ).expect(201)
    ).body.transaction_id as string;
  const charge = async (app: NestFastifyApplication) => {
    const body = chargeBody(merchant);
    const res = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    return { id: res.body.charge_request_id as number, reference: body.external_reference as string };
  };

  /** What each replica-routed read shows: transaction ids, payment ids and payment references. */
  const history = async (app: NestFastifyApplication) =>
    (
      await wallet(app)
        .get(`/api/v1/accounts/account-number/${merchant.settlementAccountNumber}/transactions`)
        .query({ limit: 500 })
        .set('authorization', merchant.tenant.auth)
        .expect(200)
    ).body.records.map((r: { transaction_id: string }) => r.transaction_id) as string[];
  const statementIds = async (app: NestFastifyApplication) => {
    const res = await wallet(app)
      .get('/api/v1/account-statements/doc')
      .query({ account_number: merchant.settlementAccountNumber, start_date: '2000-01-01', end_date: '2100-01-01', doc_type: 'EXCEL' })
      .set('authorization', merchant.tenant.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    return (await readWorkbook(res.body)).rows.map((r) => r.id);
  };
  const paymentStatement = async (app: NestFastifyApplication) =>
    (
      await gateway(app, merchant.token).post('/v1/statement').send({ start_date: '2000-01-01', end_date: '2100-01-01' }).expect(200)
    ).body.map((p: { payment_id: number }) => p.payment_id) as number[];
  const portal = async (app: NestFastifyApplication, path: string) =>
    (await request(app.getHttpServer()).get(path).set('cookie', cookie).expect(200)).text;

  /** Waits until `app` reads the replica again: its reads stop counting as skipped. */
  const readsReplica = (app: NestFastifyApplication) =>
    waitFor('the replica to be read again', async () => {
      const count = (await skipped(app, 'lag')) + (await skipped(app, 'down'));
      await history(app);
      return (await skipped(app, 'lag')) + (await skipped(app, 'down')) === count;
    });

  beforeAll(async () => {
    replica = await StreamingReplica.create();
    restoreEnv = withEnv({ DATABASE_READ_URL: replica.url(), DATABASE_READ_MAX_LAG_MS: '600000' });
    lenient = await createTestApp();
    process.env.DATABASE_READ_MAX_LAG_MS = '1000';
    strict = await createTestApp();
    merchant = await createGatewayMerchant(lenient);
    const login = await request(lenient.getHttpServer())
      .post('/portal/login')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password })
      .expect(303);
    cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    // Both processes connect to the replica before any test times its reads.
    await readsReplica(lenient);
    await readsReplica(strict);
  }, 120_000);
  afterAll(async () => {
    try {
      await closeTogether(
        () => lenient?.close(),
        () => strict?.close(),
      );
    } finally {
      await replica?.remove();
    }
    restoreEnv?.();
    warnings.mockRestore();
    logs.mockRestore();
  });

  it('serves statements, history and the portal from the replica, money, idempotency and status from the primary; a lag over the limit goes to the primary', async () => {
    const before = { transaction: await credit(lenient), payment: await charge(lenient) };
    await replica.catchUp();
    await replica.pauseReplay();
    try {
      const body = moneyBody(merchant.tenant, merchant.settlementAccountNumber, merchant.serviceCode, 500);
      const created = (await post(lenient, merchant.tenant, 'CREDIT', body).expect(201)).body;
      // The idempotency lookup finds the write the replica has not seen: the original answer, nothing moved again.
      expect((await post(lenient, merchant.tenant, 'CREDIT', body)).body).toEqual(created);
      const [{ n }] = await dataSource(lenient).query(
        `SELECT count(*)::int AS n FROM wallet_transactions WHERE source_transaction_id = $1`,
        [body.source_transaction_id],
      );
      expect(n).toBe(1);
      const payment = await charge(lenient);
      // Status queries read their own write.
      await wallet(lenient).get(`/api/v1/transactions/${created.transaction_id}`).set('authorization', merchant.tenant.auth).expect(200);
      await gateway(lenient, merchant.token).get(`/v1/transaction/${payment.id}/status`).expect(200);

      // The replica, paused before them, answers without them.
      expect(await history(lenient)).toEqual([before.transaction]);
      expect(await statementIds(lenient)).toContain(before.transaction);
      expect(await statementIds(lenient)).not.toContain(created.transaction_id);
      expect(await paymentStatement(lenient)).toEqual([before.payment.id]);
      for (const path of ['/portal/payments', '/portal/payments.csv']) {
        const page = await portal(lenient, path);
        expect(page).toContain(before.payment.reference);
        expect(page).not.toContain(payment.reference);
      }
      expect(await skipped(lenient, 'lag')).toBe(0);

      // A second behind the writes, the strict process reads the primary instead, counts it and says so.
      await waitFor('the strict process to skip the lagging replica', async () => (await history(strict)).includes(created.transaction_id));
      expect(await history(strict)).toEqual([before.transaction, created.transaction_id]);
      expect(await statementIds(strict)).toContain(created.transaction_id);
      expect(await paymentStatement(strict)).toEqual([before.payment.id, payment.id]);
      expect(await portal(strict, '/portal/payments.csv')).toContain(payment.reference);
      expect(await skipped(strict, 'lag')).toBeGreaterThanOrEqual(4);
      expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/^read replica is \d+ ms behind \(DATABASE_READ_MAX_LAG_MS=1000\)/));
    } finally {
      await replica.resumeReplay();
    }
    await replica.catchUp();
    await readsReplica(strict);
  });

  it('runs a read the replica fails midway once more on the primary', async () => {
    const down = await skipped(lenient, 'down');
    const rows = await lenient
      .get(ReadReplica)
      .read((db) =>
        db.query(
          `SELECT pg_is_in_recovery() AS standby, CASE WHEN pg_is_in_recovery() THEN pg_terminate_backend(pg_backend_pid()) END AS ended`,
        ),
      );
    expect(rows).toEqual([{ standby: false, ended: null }]);
    expect(await skipped(lenient, 'down')).toBe(down + 1);
    expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/^read replica failed a read: terminating connection/));
    await readsReplica(lenient);
  });

  it('answers from the primary while the replica is stopped, and from the replica once it is back', async () => {
    const down = await skipped(lenient, 'down');
    warnings.mockClear();
    await replica.stop();
    const transaction = await credit(lenient);
    const payment = await charge(lenient);
    expect(await history(lenient)).toContain(transaction);
    expect(await statementIds(lenient)).toContain(transaction);
    expect(await paymentStatement(lenient)).toContain(payment.id);
    expect(await portal(lenient, '/portal/payments')).toContain(payment.reference);
    expect(await skipped(lenient, 'down')).toBeGreaterThanOrEqual(down + 4);
    expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/^read replica (does not answer|failed a read): /));

    logs.mockClear();
    await replica.start();
    await replica.catchUp();
    await replica.pauseReplay();
    try {
      const unseen = await credit(lenient);
      await waitFor('the replica to be read again', async () => {
        const ids = await history(lenient);
        return ids.includes(transaction) && !ids.includes(unseen);
      });
      expect(logs).toHaveBeenCalledWith('read replica is current again: statements and lists read from it');
    } finally {
      await replica.resumeReplay();
    }
  });
});
