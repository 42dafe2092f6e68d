import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Money } from '../common/money';
import { settleBounded } from '../common/settle-bounded';
import { FloatHoldsService, type ResolvedHold } from '../float/float-holds.service';
import { PostingLane } from '../infra/database/posting-lane';
import { PAYOUT_RAIL, type PayoutOutcome, type PayoutRail } from '../rails/payout.rail';
import { isFinal, PAYOUT_STATUS, payoutAtRail, PayoutRow, PayoutStatus } from './payout';
import { PayoutAnnouncer } from './payout-announcer.service';
import { PayoutsRepository, type PayoutTransition } from './payouts.repository';

/** An operator's resolution that cannot be made: unknown payout, or one already final. */
export class PayoutResolutionError extends Error {}

/** What applying an outcome did: the payout's status after it, and whether this call moved it to a final one. */
export interface AppliedOutcome {
  status: number;
  finished: boolean;
}

/** Questions to the rail a group has out at once (a worker had 20 payout jobs at a time before groups). */
const RAIL_CALLS_IN_FLIGHT = 20;

/** What working off a payout did: whether it is done (else to be tried again), and whether it became final now. */
export interface WorkedPayout {
  done: boolean;
  finished: boolean;
}

/** A rail's (or an operator's) answer for one payout, to apply. */
export interface PayoutAnswer {
  payoutId: string;
  outcome: PayoutOutcome;
  /** The result description to store instead of the outcome's own (an operator's resolution). */
  description?: string;
}

/**
 * Takes payouts from acceptance to their result: submits them to the rail, and applies the rail's (or an
 * operator's) answers. Work comes in groups (the outbox rows a worker claimed together): the payouts are read in one
 * query, the rail asked about each at once, and the answers applied in one transaction of a few set-wide statements
 * (the payouts locked in id order, every hold resolved by one float_holds_resolve call, the statuses, the callbacks
 * and the SMS). Safe to run any number of times: only an unfinished payout moves, under its row lock, so its hold
 * gets exactly one outcome, committed with the new status, the callbacks and the SMS.
 */
@Injectable()
export class PayoutSettlementService {
  private readonly logger = new Logger(PayoutSettlementService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PAYOUT_RAIL) private readonly rail: PayoutRail,
    private readonly payouts: PayoutsRepository,
    private readonly holds: FloatHoldsService,
    private readonly announcer: PayoutAnnouncer,
    private readonly lane: PostingLane,
  ) {}

  /**
   * The work queued at acceptance: payouts still awaiting the rail are submitted (idempotent by payout id, so a
   * re-run after a crash gets the first submission's answer) and the answers applied.
   */
  async process(payoutIds: string[]): Promise<WorkedPayout[]> {
    const pending = (await this.payouts.byIds(this.db.manager, payoutIds)).filter((p) => p.status === PAYOUT_STATUS.PENDING);
    return this.ask(payoutIds, pending, (payout) => this.rail.submit(payoutAtRail(payout)));
  }

  /**
   * Re-queries the rail for pending or jammed payouts (an operator's answer arrived, or reconciliation) and applies
   * what it says now.
   */
  async recheck(payoutIds: string[]): Promise<WorkedPayout[]> {
    const open = (await this.payouts.byIds(this.db.manager, payoutIds)).filter((p) => !isFinal(p.status));
    return this.ask(payoutIds, open, (payout) => this.rail.outcomeOf(payoutAtRail(payout)));
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
    const [applied] = await this.apply(payout.client_id, [{ payoutId: payout.id, outcome, description }]);
    if (!applied?.finished) throw new PayoutResolutionError(`payout ${reference} became final meanwhile (status ${applied?.status})`);
    return (await this.payouts.byId(this.db.manager, payout.id))!;
  }

  /**
   * Applies answers to payouts not yet final, in one transaction: success settles the hold (700), failure, reversal
   * or refund return it to the float (701, 702, 705), pending or jammed keep it (703, 704). One answer per item, in
   * order: null when the payout does not exist (or is not the client's); a payout already final is left as it is
   * (finished: false). The answers are one client's: a group is one client's, and its locks stay on its shard.
   */
  async apply(clientId: string, answers: PayoutAnswer[]): Promise<Array<AppliedOutcome | null>> {
    return this.lane.run(() => this.applyNow(clientId, answers));
  }

  private applyNow(clientId: string, answers: PayoutAnswer[]): Promise<Array<AppliedOutcome | null>> {
    return this.db.transaction(async (manager) => {
      const locked = new Map(
        (
          await this.payouts.lockMany(
            manager,
            clientId,
            answers.map((a) => a.payoutId),
          )
        ).map((p) => [p.id, p]),
      );
      const applied = new Map<string, AppliedOutcome>();
      const checked: Array<{ clientId: string; id: string; status: PayoutStatus }> = [];
      const finals: Array<{ payout: PayoutRow; answer: PayoutAnswer }> = [];
      for (const answer of answers) {
        const payout = locked.get(answer.payoutId);
        if (!payout || applied.has(payout.id)) continue;
        if (isFinal(payout.status)) {
          applied.set(payout.id, { status: payout.status, finished: false });
        } else if (answer.outcome.status === 'PENDING' || answer.outcome.status === 'JAMMED') {
          const status = answer.outcome.status === 'PENDING' ? PAYOUT_STATUS.PENDING : PAYOUT_STATUS.JAMMED;
          checked.push({ clientId: payout.client_id, id: payout.id, status });
          applied.set(payout.id, { status, finished: false });
        } else {
          finals.push({ payout, answer });
          applied.set(payout.id, { status: finalStatus(payout, answer.outcome), finished: true });
        }
      }
      await this.payouts.markChecked(manager, checked);
      const outcomes = finals.map(({ payout, answer }) => ({
        clientId: payout.client_id,
        holdId: payout.hold_id,
        outcome: answer.outcome.status === 'SUCCEEDED' ? ('SETTLE' as const) : ('RELEASE' as const),
      }));
      // The holds' entries lock the rail's in-flight account, which every payout acceptance from the float also
      // takes: a group of successes (whose results need no balance) resolves them last, so it holds that lock only
      // for its commit. A group with a return needs the float's balance after it for the result, so it resolves first.
      const early = outcomes.some((o) => o.outcome === 'RELEASE');
      const holds = early ? await this.holds.resolve(manager, outcomes) : [];
      const finished = await this.payouts.finish(
        manager,
        finals.map(({ payout, answer }, i) => transition(payout, answer, holds[i] ?? null)),
      );
      await this.announcer.announce(manager, finished);
      if (!early) await this.holds.resolve(manager, outcomes);
      return answers.map((a) => applied.get(a.payoutId) ?? null);
    });
  }

  /**
   * Asks the rail about each payout at once and applies the answers as one group per client (a worker's group is one
   * client's). A payout whose question failed (the rail was away) is not done; when a group's transaction fails, each
   * answer is applied alone, so one bad payout holds back no other.
   */
  private async ask(ids: string[], payouts: PayoutRow[], question: (payout: PayoutRow) => Promise<PayoutOutcome>): Promise<WorkedPayout[]> {
    const asked = await settleBounded(payouts, RAIL_CALLS_IN_FLIGHT, question);
    const byClient = new Map<string, PayoutAnswer[]>();
    const failed = new Set<string>();
    asked.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        const answers = byClient.get(payouts[i].client_id) ?? [];
        answers.push({ payoutId: payouts[i].id, outcome: result.value });
        byClient.set(payouts[i].client_id, answers);
      } else {
        failed.add(payouts[i].id);
        this.logger.warn(`payout ${payouts[i].id}: the rail could not be asked: ${(result.reason as Error).message}`);
      }
    });
    const finished = new Set<string>();
    const noteFinished = (group: PayoutAnswer[], applied: Array<AppliedOutcome | null>) =>
      applied.forEach((a, i) => a?.finished && finished.add(group[i].payoutId));
    for (const [clientId, answers] of byClient) {
      await this.apply(clientId, answers)
        .then((applied) => noteFinished(answers, applied))
        .catch(async () => {
          for (const answer of answers) {
            await this.apply(clientId, [answer])
              .then((applied) => noteFinished([answer], applied))
              .catch((error: Error) => {
                this.logger.warn(`payout ${answer.payoutId}: the answer could not be applied: ${error.message}`);
                failed.add(answer.payoutId);
              });
          }
        });
    }
    return ids.map((id) => ({ done: !failed.has(id), finished: finished.has(id) }));
  }
}

/** Money back in the float: 701 failed, 702 reversed, 705 refunded (a B2B status; reversed for the other kinds). */
function returnedStatus(payout: PayoutRow, outcome: 'FAILED' | 'REVERSED' | 'REFUNDED'): PayoutStatus {
  if (outcome === 'FAILED') return PAYOUT_STATUS.FAILED;
  return outcome === 'REFUNDED' && payout.kind === 'B2B' ? PAYOUT_STATUS.REFUNDED : PAYOUT_STATUS.REVERSED;
}

type FinalOutcome = Exclude<PayoutOutcome, { status: 'PENDING' } | { status: 'JAMMED' }>;

function finalStatus(payout: PayoutRow, outcome: PayoutOutcome): PayoutStatus {
  const final = outcome as FinalOutcome;
  return final.status === 'SUCCEEDED' ? PAYOUT_STATUS.SUCCESSFUL : returnedStatus(payout, final.status);
}

/** Where an answer takes a payout: paid out with the rail's reference, or returned with the float's balance after it. */
function transition(
  payout: PayoutRow,
  answer: PayoutAnswer,
  hold: ResolvedHold | null,
): PayoutTransition & { clientId: string; id: string } {
  const outcome = answer.outcome as FinalOutcome;
  if (outcome.status === 'SUCCEEDED') {
    return {
      clientId: payout.client_id,
      id: payout.id,
      status: PAYOUT_STATUS.SUCCESSFUL,
      railReference: outcome.railReference,
      resultDescription: answer.description ?? 'Processed successfully',
    };
  }
  return {
    clientId: payout.client_id,
    id: payout.id,
    status: returnedStatus(payout, outcome.status),
    resultDescription: answer.description ?? outcome.reason,
    floatBalanceAfter: hold?.float_balance_after == null ? null : new Money(hold.float_balance_after),
  };
}
