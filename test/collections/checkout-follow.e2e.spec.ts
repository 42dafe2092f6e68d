import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { followCheckoutSessions, SessionFollowCause } from '../../src/collections/checkout-session';
import { collectionsBed, CollectionsBed, sessionWithPayments, SessionPaymentSpec } from '../support/collections-fixtures';
import { GatewayMerchant } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

type Case = [
  name: string,
  status: number,
  payments: SessionPaymentSpec[],
  expired: boolean,
  cause: SessionFollowCause,
  next: number,
  told: boolean,
];

const part = (status: number): SessionPaymentSpec => ({ status, amount: '1000.0000' });
const whole = (status: number): SessionPaymentSpec => ({ status, amount: '2750.0000' });

/**
 * A session's status after it opens has one home, checkout_follow_payments (src/collections/sql/): the settlement calls it
 * for payments' results, a collection reversal and the session's scheduled end through followCheckoutSessions. Each
 * move is announced by a checkout callback (checkout_<status>, the checkout document); a jammed result and a session
 * left as it was announce nothing. Sessions of 2750 with payments written directly.
 */
describe('checkout_follow_payments: the session status its payments give', () => {
  let bed: CollectionsBed;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    bed = await collectionsBed();
    ({ app, merchant } = bed);
  });
  afterAll(async () => bed?.sandbox.close());

  it.each<Case>([
    ['a result paying the whole amount: paid', 851, [part(701), whole(700)], false, 'RESULT', 801, true],
    ['a result paying part: part paid', 851, [part(700)], false, 'RESULT', 802, true],
    ['a result with a jammed payment: jammed, told nothing', 851, [part(700), part(704)], false, 'RESULT', 850, false],
    ['a failed result: unpaid again', 851, [part(701)], false, 'RESULT', 803, true],
    ['a failed result past the end: expired', 851, [part(701)], true, 'RESULT', 820, true],
    ['a reversal of the only payment: reversed', 801, [whole(702)], false, 'REVERSAL', 840, true],
    ['a reversal while a payment stands: part paid', 801, [part(700), part(702)], false, 'REVERSAL', 802, true],
    ['a reversal beside a jammed payment: reversed', 850, [part(702), part(704)], false, 'REVERSAL', 840, true],
    ['the end of an unpaid session: expired', 803, [], true, 'EXPIRY', 820, true],
    ['the end of an unpaid session, not yet come: unchanged', 803, [], false, 'EXPIRY', 803, false],
    ['the end of a part-paid session: unchanged', 802, [part(700)], true, 'EXPIRY', 802, false],
    ['the end of a session with a payment under way: unchanged', 851, [part(703)], true, 'EXPIRY', 851, false],
  ])('%s', async (_name, status, payments, expired, cause, next, told) => {
    const { sessionId, mtid } = await sessionWithPayments(app, merchant, bed.sandbox.receiver, status, payments);
    if (expired)
      await dataSource(app).query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);
    await followCheckoutSessions(dataSource(app), merchant.clientId, [sessionId], cause);

    const [session] = await dataSource(app).query(`SELECT status FROM checkout_sessions WHERE id = $1`, [sessionId]);
    expect(session.status).toBe(next);
    const deliveries: Array<{ event: string; payload: { status: number } }> = await dataSource(app).query(
      `SELECT event, payload FROM callback_deliveries WHERE client_id = $1 AND reference = $2`,
      [merchant.clientId, mtid],
    );
    expect(deliveries.map((d) => [d.event, d.payload.status])).toEqual(told ? [[`checkout_${next}`, next]] : []);
  });

  it('refuses a cause it does not know, and changes nothing', async () => {
    const { sessionId } = await sessionWithPayments(app, merchant, bed.sandbox.receiver, 851, [part(700)]);
    await expect(followCheckoutSessions(dataSource(app), merchant.clientId, [sessionId], 'SETTLED' as SessionFollowCause)).rejects.toThrow(
      /unknown cause/,
    );
    const [session] = await dataSource(app).query(`SELECT status FROM checkout_sessions WHERE id = $1`, [sessionId]);
    expect(session.status).toBe(851);
  });
});
