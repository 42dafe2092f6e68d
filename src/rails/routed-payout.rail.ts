import type { Operator } from './rail-health';
import { PayoutAtRail, PayoutDestination, PayoutForAcceptance, PayoutOutcome, PayoutRail } from './payout.rail';

/** Mobile wallets, paybills and tills go by the mobile-money operator; bank accounts by the bank rail. */
export class RoutedPayoutRail implements PayoutRail {
  constructor(
    readonly mobile: PayoutRail,
    readonly bank: PayoutRail,
  ) {}

  private railFor(destination: PayoutDestination): PayoutRail {
    return destination === 'BANK' || destination === 'BANK_ACCOUNT_NUMBER' ? this.bank : this.mobile;
  }

  acceptanceProblem(payout: PayoutForAcceptance): string | null {
    return this.railFor(payout.destination).acceptanceProblem(payout);
  }

  operatorFor(destination: PayoutDestination): Operator | null {
    return this.railFor(destination).operatorFor(destination);
  }

  /** The larger of the two: acceptance schedules before it knows which rail a payout takes. */
  settleDelayMs(): number {
    return Math.max(this.mobile.settleDelayMs(), this.bank.settleDelayMs());
  }

  submit(payout: PayoutAtRail): Promise<PayoutOutcome> {
    return this.railFor(payout.destination).submit(payout);
  }

  outcomeOf(payout: PayoutAtRail): Promise<PayoutOutcome> {
    return this.railFor(payout.destination).outcomeOf(payout);
  }
}
