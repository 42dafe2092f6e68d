import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { EntryBuilder } from '../ledger/entry-builder';
import { FloorBreachError } from '../ledger/ledger.errors';
import { LedgerService } from '../ledger/ledger.service';

export type InFlightRail = 'IN_FLIGHT_MOBILE_MONEY' | 'IN_FLIGHT_BANK' | 'IN_FLIGHT_AIRTIME';

export interface HoldLine {
  amount: Money;
  fee: Money;
}

export interface Reservation {
  reservationId: string;
  entryId: string;
  /** One per line, in the order of the lines. */
  holdIds: string[];
  floatBalanceAfter: Money;
}

/** The float (after its floor) does not cover the amounts and fees to reserve. */
export class InsufficientFloatError extends Error {
  constructor() {
    super('Insufficient float balance');
  }
}

interface HoldToResolve {
  client_id: string;
  float_account_id: string;
  amount: string;
  fee: string;
  rail: InFlightRail;
  currency: string;
}

/**
 * Two-phase holds on a client service's float (its settlement wallet). Reserving moves amount + fee from the
 * float to the rail's in-flight account in one entry; each hold then gets exactly one outcome: settled (the amount
 * left to the outside world, the fee became income) or released (amount + fee back to the float). Every method
 * runs in the caller's transaction, so the movement commits with the business record that asked for it.
 *
 * Lock order: the caller's business row, then the hold row (FOR UPDATE), then the ledger accounts.
 */
@Injectable()
export class FloatHoldsService {
  constructor(private readonly ledger: LedgerService) {}

  /** One ledger entry moving sum(amount + fee) from the float to the rail's in-flight account; one hold per line. */
  async reserve(
    manager: EntityManager,
    r: { clientId: string; floatAccountId: string; currency: string; rail: InFlightRail; lines: HoldLine[] },
  ): Promise<Reservation> {
    if (r.lines.length === 0) throw new Error('a reservation needs at least one line');
    const total = r.lines.reduce((sum, line) => sum.plus(line.amount).plus(line.fee), new Money(0));
    const inFlight = await this.ledger.systemAccount(manager, r.clientId, r.rail, r.currency);
    const entry = new EntryBuilder().debit(r.floatAccountId, total).credit(inFlight.id, total);
    let posted;
    try {
      posted = await this.ledger.postEntry(manager, { clientId: r.clientId, kind: 'FLOAT_RESERVE', lines: entry.lines() });
    } catch (error) {
      throw error instanceof FloorBreachError ? new InsufficientFloatError() : error;
    }
    const [reservation] = await manager.query(
      `INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [r.clientId, r.floatAccountId, r.rail, r.currency, posted.entryId],
    );
    // One statement for any number of lines (bulk airtime reserves up to 1000); ordinality keeps the line order.
    const holds: Array<{ id: string }> = await manager.query(
      `INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee)
       SELECT $1, $2, $3, l.amount, l.fee
       FROM unnest($4::numeric[], $5::numeric[]) WITH ORDINALITY AS l(amount, fee, n)
       ORDER BY l.n
       RETURNING id`,
      [reservation.id, r.clientId, r.floatAccountId, r.lines.map((l) => l.amount.toFixed()), r.lines.map((l) => l.fee.toFixed())],
    );
    return {
      reservationId: String(reservation.id),
      entryId: posted.entryId,
      holdIds: holds.map((h) => String(h.id)),
      floatBalanceAfter: posted.movements.get(r.floatAccountId)!.balanceAfter,
    };
  }

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
    await this.markResolved(manager, holdId, 'SETTLED', posted.entryId);
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
    await this.markResolved(manager, holdId, 'RELEASED', posted.entryId);
    return { entryId: posted.entryId, floatBalanceAfter: posted.movements.get(hold.float_account_id)!.balanceAfter };
  }

  /** Money held for payouts in flight from this float: amount + fee of its unresolved holds. */
  async reservedBalance(manager: EntityManager, floatAccountId: string): Promise<Money> {
    const [row] = await manager.query(
      `SELECT coalesce(sum(amount + fee), 0) AS reserved FROM float_holds WHERE float_account_id = $1 AND status = 'HELD'`,
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
    return hold && hold.status === 'HELD' ? hold : null;
  }

  private async markResolved(manager: EntityManager, holdId: string, status: 'SETTLED' | 'RELEASED', entryId: string): Promise<void> {
    await manager.query(`UPDATE float_holds SET status = $2, outcome_entry_id = $3, resolved_at = now() WHERE id = $1`, [
      holdId,
      status,
      entryId,
    ]);
  }
}
