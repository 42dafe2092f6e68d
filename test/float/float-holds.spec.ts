import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Money } from '../../src/common/money';
import { FloatHoldsService, InsufficientFloatError, type InFlightRail } from '../../src/float/float-holds.service';
import { balanceOf, openLedgerWallet } from '../support/ledger-fixtures';
import { systemBalance } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';

/** The float's two-phase holds against a real database: arithmetic to the 4th decimal, floors and exactly one outcome. */
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

  async function floatOf(tenant: TestTenant, initialBalance: string, minimumBalance = '0'): Promise<string> {
    const account = await openLedgerWallet(app, tenant.clientId, { initialBalance, minimumBalance });
    return account.id;
  }

  function reserve(
    tenant: TestTenant,
    floatAccountId: string,
    lines: Array<[string, string]>,
    rail: InFlightRail = 'IN_FLIGHT_MOBILE_MONEY',
  ) {
    return dataSource(app).transaction((manager) =>
      holds.reserve(manager, {
        clientId: tenant.clientId,
        floatAccountId,
        currency: 'KES',
        rail,
        lines: lines.map(([amount, fee]) => ({ amount: new Money(amount), fee: new Money(fee) })),
      }),
    );
  }

  const reserved = (floatAccountId: string) => holds.reservedBalance(dataSource(app).manager, floatAccountId).then((m) => m.toFixed(4));

  it('reserves amount + fee in one entry, settles to SETTLEMENT and FEE_INCOME, releases back to the float, to the 4th decimal', async () => {
    const tenant = await createTenant(app);
    const float = await floatOf(tenant, '1000.0000');

    const reservation = await reserve(tenant, float, [
      ['100.1234', '10.0001'],
      ['50.0005', '0'],
      ['0.0001', '0.0001'],
    ]);
    expect(reservation.holdIds).toHaveLength(3);
    expect(reservation.floatBalanceAfter.toFixed(4)).toBe('839.8758');
    expect(await balanceOf(app, float)).toBe('839.8758');
    expect(await systemBalance(app, tenant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe('160.1242');
    expect(await reserved(float)).toBe('160.1242');
    const [{ n: reserveEntries }] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1 AND kind = 'FLOAT_RESERVE'`,
      [tenant.clientId],
    );
    expect(reserveEntries).toBe(1);

    const settled = await dataSource(app).transaction((m) => holds.settle(m, reservation.holdIds[0]));
    expect(settled).not.toBeNull();
    expect(await systemBalance(app, tenant.clientId, 'SETTLEMENT')).toBe('-899.8766'); // -1000 funded, +100.1234 paid out
    expect(await systemBalance(app, tenant.clientId, 'FEE_INCOME')).toBe('10.0001');
    expect(await systemBalance(app, tenant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe('50.0007');
    expect(await balanceOf(app, float)).toBe('839.8758');
    expect(await reserved(float)).toBe('50.0007');

    const released = await dataSource(app).transaction((m) => holds.release(m, reservation.holdIds[1]));
    expect(released?.floatBalanceAfter.toFixed(4)).toBe('889.8763');
    expect(await balanceOf(app, float)).toBe('889.8763');
    expect(await reserved(float)).toBe('0.0002');

    // A hold with its outcome refuses a second one, of either kind, and moves nothing.
    expect(await dataSource(app).transaction((m) => holds.settle(m, reservation.holdIds[1]))).toBeNull();
    expect(await dataSource(app).transaction((m) => holds.release(m, reservation.holdIds[0]))).toBeNull();
    expect(await dataSource(app).transaction((m) => holds.settle(m, reservation.holdIds[0]))).toBeNull();
    expect(await balanceOf(app, float)).toBe('889.8763');
    expect(await systemBalance(app, tenant.clientId, 'FEE_INCOME')).toBe('10.0001');

    await dataSource(app).transaction((m) => holds.settle(m, reservation.holdIds[2]));
    expect(await reserved(float)).toBe('0.0000');
    expect(await systemBalance(app, tenant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe('0.0000');
    expect(await systemBalance(app, tenant.clientId, 'FEE_INCOME')).toBe('10.0002');
  });

  it('refuses a reservation that would breach the float floor and stores nothing; exactly down to the floor is fine', async () => {
    const tenant = await createTenant(app);
    const float = await floatOf(tenant, '300.0000', '100.0000');

    await expect(reserve(tenant, float, [['190.0000', '10.0001']])).rejects.toBeInstanceOf(InsufficientFloatError);
    expect(await balanceOf(app, float)).toBe('300.0000');
    const [{ n }] = await dataSource(app).query(`SELECT count(*)::int AS n FROM float_reservations WHERE client_id = $1`, [
      tenant.clientId,
    ]);
    expect(n).toBe(0);

    const exact = await reserve(tenant, float, [['190.0000', '10.0000']], 'IN_FLIGHT_BANK');
    expect(exact.floatBalanceAfter.toFixed(4)).toBe('100.0000');
    expect(await systemBalance(app, tenant.clientId, 'IN_FLIGHT_BANK')).toBe('200.0000');
    await expect(reserve(tenant, float, [['0.0001', '0']])).rejects.toBeInstanceOf(InsufficientFloatError);
  });

  it('gives each hold exactly one outcome when settle and release race', async () => {
    const tenant = await createTenant(app);
    const float = await floatOf(tenant, '10000.0000');
    const reservation = await reserve(
      tenant,
      float,
      Array.from({ length: 20 }, () => ['10.0000', '1.0000'] as [string, string]),
    );

    const outcomes = await Promise.all(
      reservation.holdIds.map(async (holdId) => {
        const [settled, released] = await Promise.all([
          dataSource(app).transaction((m) => holds.settle(m, holdId)),
          dataSource(app).transaction((m) => holds.release(m, holdId)),
        ]);
        expect([settled, released].filter((o) => o !== null)).toHaveLength(1);
        return settled ? 'SETTLED' : 'RELEASED';
      }),
    );

    const settledCount = outcomes.filter((o) => o === 'SETTLED').length;
    const releasedCount = outcomes.length - settledCount;
    const rows: Array<{ status: string; outcome_entry_id: string | null }> = await dataSource(app).query(
      `SELECT status, outcome_entry_id FROM float_holds WHERE reservation_id = $1`,
      [reservation.reservationId],
    );
    expect(rows.every((r) => r.status !== 'HELD' && r.outcome_entry_id !== null)).toBe(true);
    // Every released hold came back whole, every settled one left; nothing is in flight any more.
    expect(await balanceOf(app, float)).toBe(new Money('9780').plus(new Money('11').times(releasedCount)).toFixed(4));
    expect(await systemBalance(app, tenant.clientId, 'FEE_INCOME')).toBe(new Money(settledCount).toFixed(4));
    expect(await systemBalance(app, tenant.clientId, 'IN_FLIGHT_MOBILE_MONEY')).toBe('0.0000');
    expect(await reserved(float)).toBe('0.0000');
  });
});
