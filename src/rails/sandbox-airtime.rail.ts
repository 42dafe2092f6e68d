import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { AirtimeOutcome, AirtimeRail, AirtimeTopUp } from './airtime.rail';
import { sandboxBehaviour } from './sandbox-outcomes';

/**
 * The sandbox airtime provider: the outcome is decided by the recipient's number (provider contract §7, airtime
 * column), the same on every top-up and re-query. OTP and authorise numbers have no meaning for airtime and succeed.
 */
@Injectable()
export class SandboxAirtimeRail implements AirtimeRail {
  readonly operator = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  settleDelayMs(): number {
    return this.config.sandboxSettleDelayMs;
  }

  async topUp(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]> {
    return this.outcomeOf(topUps);
  }

  async outcomeOf(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]> {
    return topUps.map((topUp) => this.outcome(topUp));
  }

  private outcome(topUp: AirtimeTopUp): AirtimeOutcome {
    switch (sandboxBehaviour(topUp.phoneNumber)) {
      case 'FAIL':
        return { status: 'FAILED', reason: 'The recipient number cannot receive airtime (sandbox)' };
      case 'STAY_PENDING':
        return { status: 'PROCESSING' };
      case 'JAM':
        return { status: 'JAMMED' };
      default:
        return { status: 'SUCCESSFUL', providerReference: providerReference(topUp.correlationId) };
    }
  }
}

/** A stable provider receipt per top-up. */
function providerReference(correlationId: string): string {
  return `SBXA${createHash('sha256').update(correlationId).digest('hex').slice(0, 10).toUpperCase()}`;
}
