import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { PayoutAtRail, PayoutOutcome, PayoutRail } from './payout.rail';
import { sandboxBehaviour } from './sandbox-outcomes';

/**
 * The sandbox's mobile-money operator and banks for payouts: the outcome is decided by the recipient's number
 * (provider contract §7, fixed) and is the same on every submission and re-query of a payout.
 */
@Injectable()
export class SandboxPayoutRail implements PayoutRail {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  acceptanceProblem(): null {
    return null;
  }

  operatorFor(): null {
    return null;
  }

  settleDelayMs(): number {
    return this.config.sandboxSettleDelayMs;
  }

  async submit(payout: PayoutAtRail): Promise<PayoutOutcome> {
    return this.outcomeOf(payout);
  }

  async outcomeOf(payout: PayoutAtRail): Promise<PayoutOutcome> {
    switch (sandboxBehaviour(payout.recipientNumber)) {
      case 'FAIL':
        return { status: 'FAILED', reason: 'Recipient account could not be credited (sandbox)' };
      case 'STAY_PENDING':
        return { status: 'PENDING' };
      case 'JAM':
        return { status: 'JAMMED' };
      default:
        return { status: 'SUCCEEDED', railReference: railReference(payout.payoutId) };
    }
  }
}

/** A stable receipt number per payout, as a real operator or bank would print it. */
function railReference(payoutId: string): string {
  return `SBP${createHash('sha256').update(`payout:${payoutId}`).digest('hex').slice(0, 9).toUpperCase()}`;
}
