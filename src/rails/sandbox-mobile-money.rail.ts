import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ChargeAtRail, ChargeChallenge, ChargeOutcome, MobileMoneyRail, RefundAtRail } from './mobile-money.rail';
import { SANDBOX_OTP, sandboxBehaviour } from './sandbox-outcomes';

/** The sandbox operator: outcomes by payer number, settling after SANDBOX_SETTLE_DELAY_MS. */
@Injectable()
export class SandboxMobileMoneyRail implements MobileMoneyRail {
  readonly operator = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  amountProblem(): null {
    return null;
  }

  challengeFor(charge: ChargeAtRail): ChargeChallenge {
    const behaviour = sandboxBehaviour(charge.payerMsisdn);
    if (behaviour === 'OTP') return 'VERIFY_OTP';
    if (behaviour === 'AUTHORIZE') return 'AUTHORIZE_TRANSACTION';
    return 'NONE';
  }

  async verifyOtp(_charge: ChargeAtRail, otp: string): Promise<boolean> {
    return otp === SANDBOX_OTP;
  }

  settleDelayMs(): number {
    return this.config.sandboxSettleDelayMs;
  }

  async outcomeOf(charge: ChargeAtRail): Promise<ChargeOutcome> {
    switch (sandboxBehaviour(charge.payerMsisdn)) {
      case 'FAIL':
        return { status: 'FAILED', reason: 'Payer declined or has insufficient funds (sandbox)' };
      case 'STAY_PENDING':
        return { status: 'PENDING' };
      case 'JAM':
        return { status: 'JAMMED' };
      default:
        return { status: 'SUCCEEDED', operatorReference: operatorReference(charge.paymentId) };
    }
  }

  /** The sandbox operator refunds every settled payment. */
  async refund({ charge }: RefundAtRail): Promise<{ status: 'SUCCEEDED'; operatorReference: string }> {
    return { status: 'SUCCEEDED', operatorReference: operatorReference(`refund:${charge.paymentId}`) };
  }
}

/** A stable operator receipt number, like the ones real operators print on the payer's SMS. */
function operatorReference(paymentId: string): string {
  return `SBX${createHash('sha256').update(paymentId).digest('hex').slice(0, 9).toUpperCase()}`;
}
