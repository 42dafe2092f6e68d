import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { EntryBuilder } from '../ledger/entry-builder';
import { LedgerService } from '../ledger/ledger.service';

/** The in-flight system accounts a float reserves into, one per rail (float_reservations.rail). */
export const IN_FLIGHT_RAILS = ['IN_FLIGHT_MOBILE_MONEY', 'IN_FLIGHT_BANK', 'IN_FLIGHT_AIRTIME'] as const;
export type InFlightRail = (typeof IN_FLIGHT_RAILS)[number];

/** float_holds.status: a hold is HELD from its reservation until its one outcome, SETTLED or RELEASED. */
export const HOLD_STATUS = { HELD: 'HELD', SETTLED: 'SETTLED', RELEASED: 'RELEASED' } as const;
export type HoldStatus = (typeof HOLD_STATUS)[keyof typeof HOLD_STATUS];

interface HoldToResolve {
  client_id: string;
  float_account_id: string;
  amount: string;
  fee: string;
  status: HoldStatus;
  rail: InFlightRail;
  currency: string;
}

/**
 * Two-phase holds on a client service's float (its settlement wallet). Reserving, SQL function float_reserve
 * (src/float/sql/float_reserve.sql, called by payout and airtime acceptance), moves amount + fee from the float to
 * the rail's in-flight account in one entry; each hold then gets exactly one outcome here: settled (the amount left
 * to the outside world, the fee became income) or released (amount + fee back to the float). Every method runs in
 * the caller's transaction, so the movement commits with the business record that asked for it.
 *
 * Lock order: the caller's business row, then the hold row (FOR UPDATE), then the ledger accounts.
 */
@Injectable()
export class FloatHoldsService {
  constructor(private readonly ledger: LedgerService) {}

  /** Success: one entry in-flight → SETTLEMENT (amount) + FEE_INCOME (fee). null (nothing done) when already resolved. */
  async settle(manager: EntityManager, holdId: string): Promise<{ entryId: string } | null> {
    const hold = await this.lockHeld(manager, holdId);
    if (!hold) return null;
    const inFlight = await this.ledger.systemAccount(manager, hold.client_id, hold.rail, hold.currency);
    const settlement = await this.ledger.systemAccount(manager, hold.client_id, 'SETTLEMENT', hold.currency);
    const feeIncome = await this.ledger.systemAccount(manager, hold.client_id, 'FEE_INCOME', hold.currency);
    const entry = new EntryBuilder()
      .debit(inFlight.id, new Money(hold.amount).plus(hold.fee))
      .credit(settlement.id, new Money(hold.amount))
      .credit(feeIncome.id, new Money(hold.fee));
    const posted = await this.ledger.postEntry(manager, { clientId: hold.client_id, kind: 'FLOAT_SETTLE', lines: entry.lines() });
    await this.markResolved(manager, holdId, HOLD_STATUS.SETTLED, posted.entryId);
    return { entryId: posted.entryId };
  }

  /** Failure or reversal: one entry in-flight → float (amount + fee). null (nothing done) when already resolved. */
  async release(manager: EntityManager, holdId: string): Promise<{ entryId: string; floatBalanceAfter: Money } | null> {
    const hold = await this.lockHeld(manager, holdId);
    if (!hold) return null;
    const inFlight = await this.ledger.systemAccount(manager, hold.client_id, hold.rail, hold.currency);
    const total = new Money(hold.amount).plus(hold.fee);
    const entry = new EntryBuilder().debit(inFlight.id, total).credit(hold.float_account_id, total);
    const posted = await this.ledger.postEntry(manager, { clientId: hold.client_id, kind: 'FLOAT_RELEASE', lines: entry.lines() });
    await this.markResolved(manager, holdId, HOLD_STATUS.RELEASED, posted.entryId);
    return { entryId: posted.entryId, floatBalanceAfter: posted.movements.get(hold.float_account_id)!.balanceAfter };
  }

  /** Money held for payouts and airtime in flight from this float: amount + fee of its unresolved holds. */
  async reservedBalance(manager: EntityManager, floatAccountId: string): Promise<Money> {
    const [row] = await manager.query(
      `SELECT coalesce(sum(amount + fee), 0) AS reserved FROM float_holds WHERE float_account_id = $1 AND status = '${HOLD_STATUS.HELD}'`,
      [floatAccountId],
    );
    return new Money(row.reserved);
  }

  /** The hold under its row lock when it still awaits its outcome; null when it has one (or does not exist). */
  private async lockHeld(manager: EntityManager, holdId: string): Promise<HoldToResolve | null> {
    const [hold] = await manager.query(
      `SELECT h.client_id, h.float_account_id, h.amount, h.fee, h.status, r.rail, r.currency
       FROM float_holds h JOIN float_reservations r ON r.id = h.reservation_id
       WHERE h.id = $1 FOR UPDATE OF h`,
      [holdId],
    );
    return hold && hold.status === HOLD_STATUS.HELD ? hold : null;
  }

  private async markResolved(
    manager: EntityManager,
    holdId: string,
    status: Exclude<HoldStatus, typeof HOLD_STATUS.HELD>,
    entryId: string,
  ): Promise<void> {
    await manager.query(`UPDATE float_holds SET status = $2, outcome_entry_id = $3, resolved_at = now() WHERE id = $1`, [
      holdId,
      status,
      entryId,
    ]);
  }
}
