import { Injectable } from '@nestjs/common';
import { AirtimeOutcome, AirtimeRail, AirtimeTopUp } from '../airtime.rail';
import { requestOutcome } from '../rail-outcome';
import type { RailRequestRow } from '../rail-requests.repository';
import { AFRICASTALKING, AfricasTalkingGateway } from './africastalking-gateway';

/**
 * Airtime through Africa's Talking: a top-up is one rail request; asking again reads what Africa's Talking
 * answered (by callback or query), never tops up again. A top-up it took stays processing until its final status.
 */
@Injectable()
export class AfricasTalkingAirtimeRail implements AirtimeRail {
  readonly operator = AFRICASTALKING;

  constructor(private readonly gateway: AfricasTalkingGateway) {}

  settleDelayMs(): number {
    return 0;
  }

  async topUp(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]> {
    return (await this.gateway.topUp(topUps)).map(outcome);
  }

  async outcomeOf(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]> {
    return Promise.all(
      topUps.map(async (topUp) => {
        const request = await this.gateway.bySubject(topUp.recipientId);
        return request ? outcome(request) : { status: 'PROCESSING' as const };
      }),
    );
  }
}

function outcome(request: RailRequestRow): AirtimeOutcome {
  const known = requestOutcome(request, "Africa's Talking could not top up the number");
  switch (known.status) {
    case 'SUCCEEDED':
      return { status: 'SUCCESSFUL', providerReference: known.railReference };
    case 'FAILED':
      return { status: 'FAILED', reason: known.reason };
    case 'JAMMED':
      return { status: 'JAMMED' };
    default:
      return { status: 'PROCESSING' };
  }
}
