import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FloatHoldsService } from '../float/float-holds.service';
import { PAYOUT_RAIL, type PayoutOutcome, type PayoutRail } from '../rails/payout.rail';
import { isFinal, PAYOUT_STATUS, payoutAtRail, PayoutRow, PayoutStatus } from './payout';
import { PayoutAnnouncer } from './payout-announcer.service';
import { PayoutsRepository } from './payouts.repository';

/** An operator's resolution that cannot be made: unknown payout, or one already final. */
export class PayoutResolutionError extends Error {}

/** What applying an outcome did: the payout's status after it, and whether this call moved it to a final one. */
export interface AppliedOutcome {
  status: number;
  finished: boolean;
}

/**
 * Takes payouts from acceptance to their result: submits them to the rail, and applies the rail's (or an
 * operator's) answer. Safe to run any number of times: the payout row is locked and only an unfinished payout moves,
 * so its hold gets exactly one outcome, committed with the new status, the callbacks and the SMS.
 */
@Injectable()
export class PayoutSettlementService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PAYOUT_RAIL) private readonly rail: PayoutRail,
    private readonly payouts: PayoutsRepository,
    private readonly holds: FloatHoldsService,
    private readonly announcer: PayoutAnnouncer,
  ) {}

  /**
   * The job queued at acceptance. A payout still awaiting the rail is submitted (idempotent by payout id, so a
   * re-run after a crash gets the first submission's answer) and the answer applied.
   */
  async process(payoutId: string): Promise<void> {
    const payout = await this.payouts.byId(this.db.manager, payoutId);
    if (!payout || payout.status !== PAYOUT_STATUS.PENDING) return;
    const outcome = await this.rail.submit(payoutAtRail(payout));
    await this.apply(payoutId, outcome);
  }

  /** Re-queries the rail for a pending or jammed payout and applies what it says now (reconciliation). */
  async recheck(payoutId: string): Promise<AppliedOutcome | null> {
    const payout = await this.payouts.byId(this.db.manager, payoutId);
    if (!payout || isFinal(payout.status)) return null;
    return this.apply(payoutId, await this.rail.outcomeOf(payoutAtRail(payout)));
  }

  /**
   * An operator settles (SUCCESSFUL) or returns (FAILED) the hold of a pending or jammed payout by hand (admin CLI
   * payout:resolve): one ledger entry, the new status and the callback, as if the rail had answered.
   */
  async resolveByOperator(clientId: string, reference: string, resolution: 'SUCCESSFUL' | 'FAILED'): Promise<PayoutRow> {
    const payout = await this.payouts.byReference(this.db.manager, clientId, reference, ['LOCAL', 'IMT', 'B2B']);
    if (!payout) throw new PayoutResolutionError(`payout ${reference} not found for this client`);
    if (isFinal(payout.status)) throw new PayoutResolutionError(`payout ${reference} is already final (status ${payout.status})`);
    const outcome: PayoutOutcome =
      resolution === 'SUCCESSFUL'
        ? { status: 'SUCCEEDED', railReference: payout.rail_reference ?? `MANUAL-${payout.id}` }
        : { status: 'FAILED', reason: 'Failed (resolved by operator)' };
    const description = resolution === 'SUCCESSFUL' ? 'Processed successfully (resolved by operator)' : 'Failed (resolved by operator)';
    const applied = await this.apply(payout.id, outcome, description);
    if (!applied?.finished) throw new PayoutResolutionError(`payout ${reference} became final meanwhile (status ${applied?.status})`);
    return (await this.payouts.byId(this.db.manager, payout.id))!;
  }

  /**
   * Applies an outcome to a payout not yet final, in one transaction: success settles the hold (700), failure,
   * reversal or refund return it to the float (701, 702, 705), pending or jammed keep it (703, 704). Null when the
   * payout does not exist; a payout already final is left as it is (finished: false).
   */
  async apply(payoutId: string, outcome: PayoutOutcome, description?: string): Promise<AppliedOutcome | null> {
    return this.db.transaction(async (manager) => {
      const payout = await this.payouts.byId(manager, payoutId, true);
      if (!payout) return null;
      if (isFinal(payout.status)) return { status: payout.status, finished: false };
      if (outcome.status === 'PENDING' || outcome.status === 'JAMMED') {
        const status = outcome.status === 'PENDING' ? PAYOUT_STATUS.PENDING : PAYOUT_STATUS.JAMMED;
        await this.payouts.markChecked(manager, payoutId, status);
        return { status, finished: false };
      }
      let finished: PayoutRow;
      if (outcome.status === 'SUCCEEDED') {
        await this.holds.settle(manager, payout.hold_id);
        finished = await this.payouts.finish(manager, payoutId, {
          status: PAYOUT_STATUS.SUCCESSFUL,
          railReference: outcome.railReference,
          resultDescription: description ?? 'Processed successfully',
        });
      } else {
        const released = await this.holds.release(manager, payout.hold_id);
        finished = await this.payouts.finish(manager, payoutId, {
          status: returnedStatus(payout, outcome.status),
          resultDescription: description ?? outcome.reason,
          floatBalanceAfter: released?.floatBalanceAfter ?? null,
        });
      }
      await this.announcer.announce(manager, finished);
      return { status: finished.status, finished: true };
    });
  }
}

/** Money back in the float: 701 failed, 702 reversed, 705 refunded (a B2B status; reversed for the other kinds). */
function returnedStatus(payout: PayoutRow, outcome: 'FAILED' | 'REVERSED' | 'REFUNDED'): PayoutStatus {
  if (outcome === 'FAILED') return PAYOUT_STATUS.FAILED;
  return outcome === 'REFUNDED' && payout.kind === 'B2B' ? PAYOUT_STATUS.REFUNDED : PAYOUT_STATUS.REVERSED;
}
