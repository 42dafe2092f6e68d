import { Injectable } from '@nestjs/common';
import { ChargeAtRail, ChargeChallenge, ChargeOutcome, MobileMoneyRail, RefundAtRail, RefundOutcome } from '../mobile-money.rail';
import { requestOutcome } from '../rail-outcome';
import type { RailRequestRow } from '../rail-requests.repository';
import { MPESA, MpesaGateway } from './mpesa-gateway';
import { wholeShillingsProblem } from './whole-shillings';

/**
 * Collections on M-Pesa: a charge is an STK push the payer confirms on the phone. The push is sent the first time
 * the settlement job asks about the payment; its callback (or an STK query) gives the answer, and the answer's
 * follow-up job settles the payment through the same path.
 */
@Injectable()
export class MpesaMobileMoneyRail implements MobileMoneyRail {
  readonly operator = MPESA;

  constructor(private readonly gateway: MpesaGateway) {}

  amountProblem(amount: string, currency: string): string | null {
    return wholeShillingsProblem(amount, currency, 'the amount the payer pays');
  }

  challengeFor(): ChargeChallenge {
    return 'AUTHORIZE_TRANSACTION';
  }

  async verifyOtp(): Promise<boolean> {
    return false;
  }

  settleDelayMs(): number {
    return 0;
  }

  async outcomeOf(charge: ChargeAtRail): Promise<ChargeOutcome> {
    const request = await this.gateway.stkPush({
      id: charge.paymentId,
      clientId: charge.clientId,
      payerMsisdn: charge.payerMsisdn,
      amount: charge.amount,
    });
    return chargeOutcome(request);
  }

  async refund({ reversalId, charge, operatorReference }: RefundAtRail): Promise<RefundOutcome> {
    if (!operatorReference) return { status: 'FAILED', reason: 'The payment has no M-Pesa receipt to reverse' };
    const request = await this.gateway.reversal({
      id: reversalId,
      clientId: charge.clientId,
      receipt: operatorReference,
      amount: charge.amount,
    });
    if (request.outcome === 'SUCCEEDED')
      return { status: 'SUCCEEDED', operatorReference: request.receipt ?? request.operator_request_id ?? request.id };
    if (request.outcome === 'FAILED') return { status: 'FAILED', reason: request.result_description ?? 'M-Pesa refused the reversal' };
    return { status: 'PENDING' };
  }
}

function chargeOutcome(request: RailRequestRow): ChargeOutcome {
  const outcome = requestOutcome(request, 'M-Pesa payment failed');
  return outcome.status === 'SUCCEEDED' ? { status: 'SUCCEEDED', operatorReference: outcome.railReference } : outcome;
}
