import { Injectable } from '@nestjs/common';
import { PayoutAtRail, PayoutForAcceptance, PayoutOutcome, PayoutRail } from '../payout.rail';
import { requestOutcome } from '../rail-outcome';
import type { RailRequestRow } from '../rail-requests.repository';
import { MPESA, MpesaGateway } from './mpesa-gateway';
import { wholeShillingsProblem } from './whole-shillings';

/**
 * Payouts on M-Pesa: to a phone by B2C (BusinessPayment), to a paybill or till by B2B. A payout is sent once
 * (rail_requests keeps one request per payout); asking again reads what the operator answered, never re-sends.
 */
@Injectable()
export class MpesaPayoutRail implements PayoutRail {
  constructor(private readonly gateway: MpesaGateway) {}

  acceptanceProblem({ amount, currency, what }: PayoutForAcceptance): string | null {
    return wholeShillingsProblem(amount, currency, what);
  }

  operatorFor(): typeof MPESA {
    return MPESA;
  }

  settleDelayMs(): number {
    return 0;
  }

  async submit(payout: PayoutAtRail): Promise<PayoutOutcome> {
    if (payout.destination === 'MOBILE') {
      return outcome(
        await this.gateway.b2c({ id: payout.payoutId, clientId: payout.clientId, msisdn: payout.recipientNumber, amount: payout.amount }),
      );
    }
    if (payout.destination === 'PAYBILL' || payout.destination === 'TILL') {
      return outcome(
        await this.gateway.b2b({
          id: payout.payoutId,
          clientId: payout.clientId,
          to: payout.destination,
          number: payout.recipientNumber,
          accountReference: payout.accountReference,
          amount: payout.amount,
        }),
      );
    }
    throw new Error(`M-Pesa does not pay to ${payout.destination}`);
  }

  async outcomeOf(payout: PayoutAtRail): Promise<PayoutOutcome> {
    const request = await this.gateway.bySubject(payout.destination === 'MOBILE' ? 'B2C' : 'B2B', { kind: 'PAYOUT', id: payout.payoutId });
    // Never sent (its job has not run yet): sending is the job's, not reconciliation's.
    return request ? outcome(request) : { status: 'PENDING' };
  }
}

const outcome = (request: RailRequestRow) => requestOutcome(request, 'M-Pesa payment failed');
