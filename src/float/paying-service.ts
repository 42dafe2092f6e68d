import { statesThatMay } from '../wallets/wallet-state-machine';

/** The float states that may pay, which SQL function paying_service is given: the state machine keeps the rule. */
export const PAYING_STATES = statesThatMay('PAY');

/**
 * Why a client service may not pay a disbursement, as SQL function paying_service (src/float/sql/paying_service.sql)
 * finds it: unknown or inactive, no float (settlement wallet) configured, or a float that may not pay (provider
 * contract §4 and §5). Amount bounds (client_service_amount_bounds) and currency are each caller's to check. The SQL names these;
 * test/disbursements/acceptance-outcomes.spec.ts holds them to this list.
 */
export const PAYING_SERVICE_REFUSALS = ['SERVICE_NOT_ALLOWED', 'NO_FLOAT', 'FLOAT_NOT_ACTIVE'] as const;
export type PayingServiceOutcome = (typeof PAYING_SERVICE_REFUSALS)[number];

/** A refusal in the payout family's error codes, with its detail; each interface words its own answer. */
export interface PayingServiceRefusal {
  refusal: 'SERVICE_NOT_ALLOWED' | 'INVALID_WALLET';
  detail: string;
}

/** Whether an acceptance answer is paying_service's refusal (narrowing the answer to those outcomes). */
export function refusedByPayingService<A extends { outcome: string }>(answer: A): answer is Extract<A, { outcome: PayingServiceOutcome }> {
  return (PAYING_SERVICE_REFUSALS as readonly string[]).includes(answer.outcome);
}

export function payingServiceRefusal(outcome: PayingServiceOutcome, serviceCode: string): PayingServiceRefusal {
  switch (outcome) {
    case 'SERVICE_NOT_ALLOWED':
      return { refusal: 'SERVICE_NOT_ALLOWED', detail: `Invalid service code ${serviceCode}` };
    case 'NO_FLOAT':
      return { refusal: 'INVALID_WALLET', detail: `Service ${serviceCode} has no float (settlement wallet) configured` };
    case 'FLOAT_NOT_ACTIVE':
      return { refusal: 'INVALID_WALLET', detail: `The float of service ${serviceCode} is not active` };
  }
}
