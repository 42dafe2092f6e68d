import { createHash } from 'node:crypto';
import type {
  MovementStatus,
  OperatorBalance,
  OperatorMovement,
  OperatorStatement,
  OurMovement,
  ReconciledRail,
} from './operator-statement';
import { sandboxBehaviour } from './sandbox-outcomes';

/**
 * The sandbox's float at a simulated operator. The simulator keeps no account, so its balance comes from whoever
 * can derive it from our records (the reconciliation engine binds SANDBOX_BALANCES); without one, asking throws.
 */
export type SandboxBalances = (rail: ReconciledRail) => Promise<OperatorBalance>;
export const SANDBOX_BALANCES = Symbol('SANDBOX_BALANCES');

/**
 * A sandbox rail answering what it simulated. Its outcomes are a function of the payer's or recipient's number
 * (provider contract §7), so it reports, for each movement of ours, what it decided: succeeded (with the receipt we
 * hold, or the one it would print), failed, or still pending (the pending and jammed numbers: it never answers
 * those). It knows nothing we did not ask it for: a sandbox run has no rows only at the operator.
 */
export class SandboxStatement implements OperatorStatement {
  constructor(
    readonly rail: ReconciledRail,
    private readonly balances: SandboxBalances | null,
  ) {}

  async movements(_period: unknown, ours: readonly OurMovement[]): Promise<OperatorMovement[]> {
    return ours.map((movement) => ({
      operatorReference: movement.operatorReference ?? sandboxReference(this.rail, movement.recordId),
      ourReference: movement.ourReference,
      counterparty: movement.counterparty,
      amount: movement.amount,
      currency: movement.currency,
      direction: movement.direction,
      status: simulated(movement.counterparty),
      at: movement.at,
      evidence: { simulator: this.rail, behaviour: sandboxBehaviour(movement.counterparty ?? '') },
    }));
  }

  async balance(): Promise<OperatorBalance> {
    if (!this.balances) throw new Error(`the sandbox ${this.rail} rail keeps no float of its own, and nothing derives one`);
    return this.balances(this.rail);
  }
}

function simulated(counterparty: string | null): MovementStatus {
  switch (sandboxBehaviour(counterparty ?? '')) {
    case 'FAIL':
      return 'FAILED';
    case 'STAY_PENDING':
    case 'JAM':
      return 'PENDING';
    default:
      return 'SUCCEEDED';
  }
}

/** A stable receipt for a movement the simulator settled but we hold no receipt of. */
function sandboxReference(rail: ReconciledRail, recordId: string): string {
  return `SBR${createHash('sha256').update(`${rail}:${recordId}`).digest('hex').slice(0, 9).toUpperCase()}`;
}
