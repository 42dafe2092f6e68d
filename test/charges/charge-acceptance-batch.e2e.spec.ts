import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { GatewayPrincipal } from '../../src/auth/gateway/gateway-principal';
import { ChargesService } from '../../src/charges/charges.service';
import { GatewayError } from '../../src/common/errors/gateway-error';
import { CallbackResolver } from '../../src/common/url-safety/pinned-post';
import { RailHealth } from '../../src/rails/rail-health';
import { APP_CONFIG } from '../../src/infra/config/app-config';
import { pgPool } from '../../src/infra/database/prepared';
import { PaymentsRepository } from '../../src/collections/payments.repository';
import { PaymentsService } from '../../src/collections/payments.service';
import { MOBILE_MONEY_RAIL } from '../../src/rails/mobile-money.rail';
import { SplitSettlementsService } from '../../src/split-settlements/split-settlements.service';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  startIsolatedSandbox,
} from '../support/gateway-fixtures';
import { dataSource, deadlockCount } from '../support/test-app';

/**
 * Charge acceptance by group commit (issue 10 item 2): charges accepted at the same moment in one process go to the
 * database as one call (collection_accept_charges) and one transaction, each answered as it would be alone.
 */
describe('charges accepted in groups', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let principal: GatewayPrincipal;
  let charges: ChargesService;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(3_600_000) });
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
    const [key] = await dataSource(app).query(`SELECT id FROM api_keys WHERE client_id = $1 LIMIT 1`, [merchant.clientId]);
    principal = { apiKeyId: key.id, clientId: merchant.clientId, clientCode: merchant.clientCode };
    charges = app.get(ChargesService);
  });
  afterAll(async () => sandbox?.close());

  /** Accepts the bodies in one turn of the event loop (so they leave together); the answers and the calls made. */
  async function acceptTogether(bodies: Array<Record<string, unknown>>) {
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      const answers = await Promise.allSettled(bodies.map((body) => charges.accept(principal, body as never)));
      const calls = query.mock.calls.filter(([config]) => (config as { name?: string }).name === 'collection_accept_charges').length;
      return { answers, calls };
    } finally {
      query.mockRestore();
    }
  }

  const paymentsOf = (reference: string) =>
    dataSource(app).query(`SELECT id::text, xmin::text AS tx FROM payments WHERE client_id = $1 AND external_reference = $2`, [
      merchant.clientId,
      reference,
    ]);

  it('new charges, copies, a reused reference, a replay and a refusal in one call are each answered as alone', async () => {
    const earlier = chargeBody(merchant, { amount: '150' });
    const original = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(earlier).expect(200);
    const fresh = chargeBody(merchant, { amount: '200' });
    const another = chargeBody(merchant, { amount: '300' });

    const { answers, calls } = await acceptTogether([
      fresh,
      fresh,
      { ...fresh, amount: '201' },
      earlier,
      chargeBody(merchant, { service_code: 'NO-SUCH-SERVICE' }),
      another,
    ]);
    expect(calls).toBe(1);
    const [first, copy, reused, replay, refused, other] = answers;

    expect(first).toEqual({ status: 'fulfilled', value: expect.objectContaining({ status_code: 176, service_amount: '200.0000' }) });
    expect(copy).toEqual(first);
    expect(reused).toEqual({ status: 'rejected', reason: expect.any(GatewayError) });
    expect((reused as PromiseRejectedResult).reason.getStatus()).toBe(409);
    expect(replay).toEqual({ status: 'fulfilled', value: original.body });
    expect(refused.status).toBe('rejected');
    expect((refused as PromiseRejectedResult).reason.getStatus()).toBe(400);
    expect(other).toEqual({ status: 'fulfilled', value: expect.objectContaining({ status_code: 176, service_amount: '300.0000' }) });

    // One row per reference, both written by one transaction.
    const [freshRows, otherRows] = [
      await paymentsOf(fresh.external_reference as string),
      await paymentsOf(another.external_reference as string),
    ];
    expect(freshRows).toEqual([
      { id: String((first as PromiseFulfilledResult<{ charge_request_id: number }>).value.charge_request_id), tx: expect.any(String) },
    ]);
    expect(otherRows).toHaveLength(1);
    expect(freshRows[0].tx).toBe(otherRows[0].tx);
    expect(await paymentsOf(earlier.external_reference as string)).toHaveLength(1);
  });

  it('two processes whose groups hold the same references in opposite orders make one charge each, without deadlock', async () => {
    // A second ChargesService on the same database stands for another API process: a group of its own in flight.
    const otherProcess = new ChargesService(
      dataSource(app),
      app.get(APP_CONFIG),
      app.get(MOBILE_MONEY_RAIL),
      app.get(SplitSettlementsService),
      app.get(PaymentsRepository),
      app.get(PaymentsService),
      app.get(CallbackResolver),
      app.get(RailHealth),
    );
    const bodies = Array.from({ length: 50 }, (_, i) => chargeBody(merchant, { amount: String(100 + i) }));
    const deadlocksBefore = await deadlockCount(app);
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    let answers: PromiseSettledResult<{ charge_request_id: number }>[];
    try {
      answers = await Promise.allSettled([
        ...bodies.map((body) => charges.accept(principal, body as never)),
        ...[...bodies].reverse().map((body) => otherProcess.accept(principal, body as never)),
      ]);
      // One group from each process, both in flight at once.
      expect(query.mock.calls.filter(([c]) => (c as { name?: string }).name === 'collection_accept_charges')).toHaveLength(2);
    } finally {
      query.mockRestore();
    }
    expect(answers.filter((a) => a.status !== 'fulfilled')).toEqual([]);
    const ids = answers.map((a) => (a as PromiseFulfilledResult<{ charge_request_id: number }>).value.charge_request_id);
    for (let i = 0; i < 50; i++) expect(ids[99 - i]).toBe(ids[i]);
    expect(new Set(ids).size).toBe(50);
    // A deadlock would have been retried and gone unseen in the answers: none happened.
    expect(await deadlockCount(app)).toBe(deadlocksBefore);
    const [count] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM payments WHERE client_id = $1 AND external_reference = ANY($2)`,
      [merchant.clientId, bodies.map((b) => b.external_reference)],
    );
    expect(count.n).toBe(50);
  });
});
