import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { AirtimeRepository } from '../../src/airtime/airtime.repository';
import { Money } from '../../src/common/money';
import { FloatHoldsService, HOLD_STATUS, HoldOutcome } from '../../src/float/float-holds.service';
import { PayoutsRepository } from '../../src/payouts/payouts.repository';
import { createPayoutMerchant, payoutReference, payoutToAccept } from '../support/disbursement-fixtures';
import { GatewayMerchant, systemBalance } from '../support/gateway-fixtures';
import { balanceOf } from '../support/ledger-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * The float's two-phase holds against a real database: arithmetic to the 4th decimal, floors and exactly one outcome.
 * Holds are reserved the one way they are in service, by acceptance (SQL function float_reserve, called by
 * payout_accept_batch and airtime_accept); FloatHoldsService.resolve settles and releases them.
 */
describe('float holds', () => {
  let app: NestFastifyApplication;
  let holds: FloatHoldsService;

  beforeAll(async () => {
    app = await createTestApp();
    holds = app.get(FloatHoldsService);
  });
  afterAll(async () => {
    expect(await ledgerViolations(app)).toEqual([]);
    await app.close();
  });

  /** A merchant whose service charges a FIXED `fee` on any amount from 0.0001, paying out of a float of `float`. */
  const merchantWith = (float: string, fee: string) =>
    createPayoutMerchant(app, { float, serviceOverrides: { transaction_fee: fee, minimum_transaction_amount: 0.0001 } });

  /** A bulk airtime request of these amounts (one hold each, one reservation): the outcome and the holds in order. */
  async function reserveAirtime(merchant: GatewayMerchant, amounts: string[]) {
    const reference = payoutReference('hold');
    const { outcome } = await app.get(AirtimeRepository).accept({
      clientId: merchant.clientId,
      reference,
      serviceCode: merchant.serviceCode,
      recipients: amounts.map((amount, i) => ({ phoneNumber: `2547${String(i).padStart(8, '0')}`, amount: new Decimal(amount) })),
      message: 'Queued',
      recipientsPerJob: 1000,
      processAt: new Date(Date.now() + 3_600_000),
    });
    const rows: Array<{ hold_id: string; reservation_id: string }> = await dataSource(app).query(
      `SELECT r.hold_id, q.reservation_id FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id
       WHERE q.client_id = $1 AND q.reference = $2 ORDER BY r.position`,
      [merchant.clientId, reference],
    );
    return { outcome, holdIds: rows.map((r) => r.hold_id), reservationId: rows[0]?.reservation_id };
  }

  /** A local BANK payout of `amount` (the IN_FLIGHT_BANK rail): acceptance's outcome. */
  async function reserveBankPayout(merchant: GatewayMerchant, amount: string) {
    const { outcome } = await app.get(PayoutsRepository).accept(
      payoutToAccept(merchant, payoutReference('hold'), amount, {
        destinationType: 'BANK',
        destinationName: 'BANK_KEN',
        recipientAccountNumber: '1234567890',
        recipientBankCode: '01',
        rail: 'IN_FLIGHT_BANK',
      }),
    );
    return outcome;
  }

  /** One hold's outcome in a transaction of its own, as the services resolve theirs: float_holds_resolve's answer. */
  const resolve = (merchant: GatewayMerchant, holdId: string, outcome: HoldOutcome) =>
    dataSource(app)
      .transaction((m) => holds.resolve(m, [{ clientId: merchant.clientId, holdId, outcome }]))
      .then(([hold]) => hold);

  const reserved = (merchant: GatewayMerchant) =>
    holds.reservedBalance(dataSource(app).manager, merchant.settlementAccountId).then((m) => m.toFixed(4));

  it('reserves amount + fee in one entry, settles to SETTLEMENT and FEE_INCOME, releases back to the float, to the 4th decimal', async () => {
    const merchant = await merchantWith('1000.0000', '10.0001');
    const float = merchant.settlementAccountId;

    const reservation = await reserveAirtime(merchant, ['100.1234', '50.0005', '0.0001']);
    expect(reservation.outcome).toBe('ACCEPTED');
    expect(reservation.holdIds).toHaveLength(3);
    // 150.1240 + 3 × 10.0001
    expect(await balanceOf(app, float)).toBe('819.8757');
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_AIRTIME')).toBe('180.1243');
    expect(await reserved(merchant)).toBe('180.1243');
    const [{ n: reserveEntries }] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1 AND kind = 'FLOAT_RESERVE'`,
      [merchant.clientId],
    );
    expect(reserveEntries).toBe(1);

    const settled = await resolve(merchant, reservation.holdIds[0], 'SETTLE');
    expect(settled.resolved).toBe(true);
    expect(await systemBalance(app, merchant.clientId, 'SETTLEMENT')).toBe('-899.8766'); // -1000 funded, +100.1234 paid out
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('10.0001');
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_AIRTIME')).toBe('70.0008');
    expect(await balanceOf(app, float)).toBe('819.8757');
    expect(await reserved(merchant)).toBe('70.0008');

    const released = await resolve(merchant, reservation.holdIds[1], 'RELEASE');
    expect(released.resolved).toBe(true);
    expect(new Money(released.float_balance_after!).toFixed(4)).toBe('879.8763');
    expect(await balanceOf(app, float)).toBe('879.8763');
    expect(await reserved(merchant)).toBe('10.0002');

    // A hold with its outcome refuses a second one, of either kind, and moves nothing.
    expect((await resolve(merchant, reservation.holdIds[1], 'SETTLE')).resolved).toBe(false);
    expect((await resolve(merchant, reservation.holdIds[0], 'RELEASE')).resolved).toBe(false);
    expect((await resolve(merchant, reservation.holdIds[0], 'SETTLE')).resolved).toBe(false);
    expect(await balanceOf(app, float)).toBe('879.8763');
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('10.0001');

    await resolve(merchant, reservation.holdIds[2], 'SETTLE');
    expect(await reserved(merchant)).toBe('0.0000');
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_AIRTIME')).toBe('0.0000');
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('20.0002');
  });

  it('refuses a reservation that would breach the float floor and stores nothing; exactly down to the floor is fine', async () => {
    const merchant = await merchantWith('300.0000', '10.0001');
    const float = merchant.settlementAccountId;
    await dataSource(app).query(`UPDATE ledger_accounts SET minimum_balance = 100 WHERE id = $1`, [float]);

    expect(await reserveBankPayout(merchant, '190.0000')).toBe('INSUFFICIENT_FLOAT');
    expect(await balanceOf(app, float)).toBe('300.0000');
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM float_reservations WHERE client_id = $1`, [
      merchant.clientId,
    ]);
    expect(n).toBe(0);

    expect(await reserveBankPayout(merchant, '189.9999')).toBe('ACCEPTED');
    expect(await balanceOf(app, float)).toBe('100.0000');
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_BANK')).toBe('200.0000');
    expect(await reserveBankPayout(merchant, '0.0001')).toBe('INSUFFICIENT_FLOAT');
    expect(await balanceOf(app, float)).toBe('100.0000');
  });

  it('gives each hold exactly one outcome when settle and release race', async () => {
    const merchant = await merchantWith('10000.0000', '1');
    const reservation = await reserveAirtime(
      merchant,
      Array.from({ length: 20 }, () => '10.0000'),
    );

    const outcomes = await Promise.all(
      reservation.holdIds.map(async (holdId) => {
        const [settled, released] = await Promise.all([resolve(merchant, holdId, 'SETTLE'), resolve(merchant, holdId, 'RELEASE')]);
        expect([settled, released].filter((o) => o.resolved)).toHaveLength(1);
        return settled.resolved ? HOLD_STATUS.SETTLED : HOLD_STATUS.RELEASED;
      }),
    );

    const settledCount = outcomes.filter((o) => o === HOLD_STATUS.SETTLED).length;
    const releasedCount = outcomes.length - settledCount;
    const rows: Array<{ status: string; outcome_entry_id: string | null }> = await dataSource(app).query(
      `SELECT status, outcome_entry_id FROM float_holds WHERE reservation_id = $1`,
      [reservation.reservationId],
    );
    expect(rows.map((r) => r.status).sort()).toEqual([...outcomes].sort());
    expect(rows.every((r) => r.outcome_entry_id !== null)).toBe(true);
    // Every released hold came back whole, every settled one left; nothing is in flight any more.
    expect(await balanceOf(app, merchant.settlementAccountId)).toBe(
      new Money('9780').plus(new Money('11').times(releasedCount)).toFixed(4),
    );
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(new Money(settledCount).toFixed(4));
    expect(await systemBalance(app, merchant.clientId, 'IN_FLIGHT_AIRTIME')).toBe('0.0000');
    expect(await reserved(merchant)).toBe('0.0000');
  });
});
