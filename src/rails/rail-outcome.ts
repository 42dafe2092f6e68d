import type { PayoutOutcome } from './payout.rail';
import type { RailRequestRow } from './rail-requests.repository';

/** What an operator's answer can be: REVERSED and REFUNDED come later, from other requests. */
type RequestOutcome = Extract<PayoutOutcome, { status: 'SUCCEEDED' | 'FAILED' | 'JAMMED' | 'PENDING' }>;

/** Where a request to a real operator stands, as a payout rail answers it (a charge's outcome differs only in naming the reference). */
export function requestOutcome(request: RailRequestRow, failedReason: string): RequestOutcome {
  switch (request.outcome) {
    case 'SUCCEEDED':
      return { status: 'SUCCEEDED', railReference: request.receipt ?? request.operator_request_id ?? request.id };
    case 'FAILED':
      return { status: 'FAILED', reason: request.result_description ?? failedReason };
    case 'JAMMED':
      return { status: 'JAMMED' };
    default:
      return { status: 'PENDING' };
  }
}
