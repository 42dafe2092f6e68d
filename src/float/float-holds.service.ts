import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';

/** The in-flight system accounts a float reserves into, one per rail (float_reservations.rail). */
export const IN_FLIGHT_RAILS = ['IN_FLIGHT_MOBILE_MONEY', 'IN_FLIGHT_BANK', 'IN_FLIGHT_AIRTIME'] as const;
export type InFlightRail = (typeof IN_FLIGHT_RAILS)[number];

/** float_holds.status: a hold is HELD from its reservation until its one outcome, SETTLED or RELEASED. */
export const HOLD_STATUS = { HELD: 'HELD', SETTLED: 'SETTLED', RELEASED: 'RELEASED' } as const;

/** What a hold's outcome is to be. */
export type HoldOutcome = 'SETTLE' | 'RELEASE';

/** float_holds_resolve's answer for one hold: whether this call resolved it, and the float's balance after a release. */
export interface ResolvedHold {
  hold_id: string;
  resolved: boolean;
  entry_id: string | null;
  float_balance_after: string | null;
}

const RESOLVE_HOLDS: PreparedStatement = {
  name: 'float_holds_resolve',
  text: 'SELECT * FROM float_holds_resolve(p_client_ids => $1::uuid[], p_hold_ids => $2::bigint[], p_outcomes => $3::text[])',
};

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
  /**
   * Many holds' outcomes in one call (float_holds_resolve, src/float/sql/float_holds_resolve.sql), one answer per hold
   * in their order: SETTLE posts one entry in-flight → SETTLEMENT (amount) + FEE_INCOME (fee), RELEASE one entry
   * in-flight → float (amount + fee); a hold already resolved is left as it is (resolved: false).
   */
  async resolve(manager: EntityManager, holds: Array<{ clientId: string; holdId: string; outcome: HoldOutcome }>): Promise<ResolvedHold[]> {
    if (holds.length === 0) return [];
    const rows = await runPrepared<ResolvedHold>(manager, RESOLVE_HOLDS, [
      holds.map((h) => h.clientId),
      holds.map((h) => h.holdId),
      holds.map((h) => h.outcome),
    ]);
    return rows.map((r) => ({ ...r, hold_id: String(r.hold_id), entry_id: r.entry_id === null ? null : String(r.entry_id) }));
  }

  /** Money held for payouts and airtime in flight from this float: amount + fee of its unresolved holds. */
  async reservedBalance(manager: EntityManager, floatAccountId: string): Promise<Money> {
    const [row] = await manager.query(
      `SELECT coalesce(sum(amount + fee), 0) AS reserved FROM float_holds WHERE float_account_id = $1 AND status = '${HOLD_STATUS.HELD}'`,
      [floatAccountId],
    );
    return new Money(row.reserved);
  }
}
