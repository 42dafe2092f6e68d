import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { GatewayPrincipal } from '../../src/auth/gateway/gateway-principal';
import { CheckoutService } from '../../src/checkout/checkout.service';
import { GatewayError } from '../../src/common/errors/gateway-error';
import { pgPool } from '../../src/infra/database/prepared';
import { checkoutBody } from '../support/collections-fixtures';
import { createGatewayMerchant, GatewayMerchant, IsolatedSandbox, startIsolatedSandbox } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/**
 * Checkout initiation by group commit (issue 10 item 2): sessions opened at the same moment in one process go to
 * the database as one call (collection_initiate_checkouts), each answered as it would be alone.
 */
describe('checkouts initiated in groups', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let principal: GatewayPrincipal;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox();
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
    const [key] = await dataSource(app).query(`SELECT id FROM api_keys WHERE client_id = $1 LIMIT 1`, [merchant.clientId]);
    principal = { apiKeyId: key.id, clientId: merchant.clientId, clientCode: merchant.clientCode };
  });
  afterAll(async () => sandbox?.close());

  it('new sessions, a copy, a reused reference and a refusal in one call are each answered as alone', async () => {
    const fresh = checkoutBody(merchant, sandbox.receiver, { amount: 1500 });
    const another = checkoutBody(merchant, sandbox.receiver, { amount: 700 });
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    let answers: PromiseSettledResult<{ checkout_reference: string; amount: number }>[];
    try {
      answers = await Promise.allSettled(
        [fresh, fresh, { ...fresh, amount: 1600 }, { ...another, service_code: 'NO-SUCH-SERVICE' }, another].map((body) =>
          app.get(CheckoutService).initiate(principal, body as never),
        ),
      );
      expect(query.mock.calls.filter(([c]) => (c as { name?: string }).name === 'collection_initiate_checkouts')).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
    const [first, copy, reused, refused, other] = answers;
    expect(first).toEqual({ status: 'fulfilled', value: expect.objectContaining({ amount: 1500 }) });
    expect(copy).toEqual(first);
    expect(reused).toEqual({ status: 'rejected', reason: expect.any(GatewayError) });
    expect((reused as PromiseRejectedResult).reason.getStatus()).toBe(409);
    expect(refused.status).toBe('rejected');
    expect((refused as PromiseRejectedResult).reason.getStatus()).toBe(400);
    // The refused request named the other session's reference: it recorded nothing, so the valid one after it is new.
    expect(other).toEqual({ status: 'fulfilled', value: expect.objectContaining({ amount: 700 }) });

    const sessions = await dataSource(app).query(
      `SELECT merchant_transaction_id, xmin::text AS tx FROM checkout_sessions WHERE client_id = $1 AND merchant_transaction_id = ANY($2)`,
      [merchant.clientId, [fresh.merchant_transaction_id, another.merchant_transaction_id]],
    );
    expect(sessions).toHaveLength(2);
    expect(sessions[0].tx).toBe(sessions[1].tx);
  });
});
