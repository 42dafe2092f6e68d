import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import { APP_CONFIG, type AppConfig } from '../../src/infra/config/app-config';
import type { OperatorMovement, OperatorStatement, ReconciledRail, ReconciliationPeriod } from '../../src/rails/operator-statement';
import { ReconciliationRepository } from '../../src/reconciliation/reconciliation.repository';
import { ReconciliationScheduler } from '../../src/reconciliation/reconciliation.scheduler';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import { IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/**
 * What an operator of the platform sees of reconciliation without running it (issue 33, item 4): the Prometheus
 * series in /metrics, and the worker's daily run from RECON_DAILY_AT (a scheduler on the real repository and service
 * of the sandbox rails, ticked at chosen instants).
 */
describe('reconciliation metrics and the daily run', () => {
  jest.setTimeout(180_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox();
    app = sandbox.app;
  }, 120_000);
  afterAll(async () => sandbox?.close());

  const metrics = async () => (await request(app.getHttpServer()).get('/metrics').expect(200)).text;
  /** The series of a metric that are not zero (every outcome a run counts is reported, zero or not). */
  const series = (text: string, name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) && !line.endsWith(' 0'))
      .sort();

  /** Rows only at the operator: money it moved that we hold no record of; `listedTwice` is listed twice. */
  function statementOf(references: string[], listedTwice: string): OperatorStatement {
    const row = (reference: string): OperatorMovement => ({
      operatorReference: reference,
      ourReference: null,
      counterparty: '254799999999',
      amount: new Decimal('55.00'),
      currency: 'KES',
      direction: 'IN',
      status: 'SUCCEEDED',
      at: new Date(),
      evidence: { TransID: reference },
    });
    return {
      rail: 'mpesa',
      movements: async () => [...references.map(row), row(listedTwice)],
      balance: async () => ({ amount: new Decimal('0'), currency: 'KES', at: new Date(), evidence: {} }),
    };
  }

  it('counts every row every run found per rail and outcome, and the differences still open per rail', async () => {
    const period = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
    const service = app.get(ReconciliationService);
    const statement = statementOf(['QMETRIC1', 'QMETRIC2'], 'QMETRIC1');
    await service.run('mpesa', period, 'test', statement);
    expect(series(await metrics(), 'paygate_recon_rows_total')).toEqual([
      'paygate_recon_rows_total{rail="mpesa",outcome="DUPLICATE_AT_OPERATOR"} 1',
      'paygate_recon_rows_total{rail="mpesa",outcome="MISSING_AT_US"} 2',
    ]);
    expect(series(await metrics(), 'paygate_recon_open_exceptions')).toEqual(['paygate_recon_open_exceptions{rail="mpesa"} 3']);

    // The same period again: the rows found are counted again, the open differences are not doubled.
    await service.run('mpesa', period, 'test', statement);
    const again = await metrics();
    expect(series(again, 'paygate_recon_rows_total')).toEqual([
      'paygate_recon_rows_total{rail="mpesa",outcome="DUPLICATE_AT_OPERATOR"} 2',
      'paygate_recon_rows_total{rail="mpesa",outcome="MISSING_AT_US"} 4',
    ]);
    expect(series(again, 'paygate_recon_open_exceptions')).toEqual(['paygate_recon_open_exceptions{rail="mpesa"} 3']);

    // A person resolves one: one fewer open.
    const [{ id }] = await dataSource(app).query(`SELECT id FROM reconciliation_rows WHERE operator_reference = 'QMETRIC2'`);
    await service.resolve(String(id), 'alice', 'another product on the shortcode', null);
    expect(series(await metrics(), 'paygate_recon_open_exceptions')).toEqual(['paygate_recon_open_exceptions{rail="mpesa"} 2']);
  });

  it('runs each rail once from RECON_DAILY_AT for the previous UTC day, not again once complete, again while incomplete', async () => {
    const real = app.get(ReconciliationService);
    const failing: OperatorStatement = {
      rail: 'jenga',
      movements: async () => {
        throw new Error('Jenga answered HTTP 503');
      },
      balance: async () => {
        throw new Error('not asked');
      },
    };
    let jengaDown = true;
    // The real service, with Jenga's statement failing while `jengaDown`.
    const service = {
      rails: () => real.rails(),
      run: (rail: ReconciledRail, period: ReconciliationPeriod, by: string) =>
        real.run(rail, period, by, rail === 'jenga' && jengaDown ? failing : undefined),
    } as unknown as ReconciliationService;
    const config = { ...app.get<AppConfig>(APP_CONFIG), reconDailyAtMinute: 2 * 60 + 30 };
    const scheduler = new ReconciliationScheduler(service, app.get(ReconciliationRepository), config);
    const runsOfDay = async () =>
      (
        await dataSource(app).query(
          `SELECT rail, outcome, started_by FROM reconciliation_runs WHERE period_from = '2026-11-26T00:00:00Z' AND period_to = '2026-11-27T00:00:00Z'
            ORDER BY id`,
        )
      ).map((r: Record<string, string>) => `${r.rail} ${r.outcome} ${r.started_by}`);

    expect(real.rails()).toEqual(['mpesa', 'jenga', 'africastalking']);
    await scheduler.tick(new Date('2026-11-27T02:29:59Z'));
    expect(await runsOfDay()).toEqual([]);

    await scheduler.tick(new Date('2026-11-27T02:30:00Z'));
    expect(await runsOfDay()).toEqual(['mpesa COMPLETE scheduler', 'jenga INCOMPLETE scheduler', 'africastalking COMPLETE scheduler']);

    // An hour later, Jenga answering again: only the incomplete rail is run; then nothing more for that day.
    jengaDown = false;
    await scheduler.tick(new Date('2026-11-27T03:30:00Z'));
    await scheduler.tick(new Date('2026-11-27T04:30:00Z'));
    expect(await runsOfDay()).toEqual([
      'mpesa COMPLETE scheduler',
      'jenga INCOMPLETE scheduler',
      'africastalking COMPLETE scheduler',
      'jenga COMPLETE scheduler',
    ]);
  });
});
