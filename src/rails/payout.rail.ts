import type { Operator } from './rail-health';

/** Where a payout goes: a mobile wallet or bank account (local, IMT), or a business's till, paybill or bank account (B2B). */
export type PayoutDestination = 'MOBILE' | 'BANK' | 'PAYBILL' | 'TILL' | 'BANK_ACCOUNT_NUMBER';

export interface PayoutAtRail {
  /** Our payout id: the rail's idempotency key, so a repeated submission pays once. */
  payoutId: string;
  /** The payout's client: the operator's record of the payout is kept with it. */
  clientId: string;
  destination: PayoutDestination;
  destinationName: string;
  /** Whose account it is, as the merchant named them (bank transfers carry it). */
  recipientName: string;
  /** The number the money goes to: the MSISDN for MOBILE, the account (till, paybill) number otherwise. */
  recipientNumber: string;
  bankCode: string | null;
  /** A paybill payment's account reference (B2B PAYBILL), else null. */
  accountReference: string | null;
  /** What the recipient receives: an IMT's recipient_amount in its currency, else the payout's own amount. */
  amount: string;
  currency: string;
}

/** What a rail checks before a payout is accepted; `what` names the amount in a refusal (an IMT's recipient_amount). */
export type PayoutForAcceptance = Pick<PayoutAtRail, 'destination' | 'bankCode' | 'amount' | 'currency'> & { what: string };

/** Where a payout stands at the rail. REFUNDED is a B2B rail's answer (705); REVERSED any rail's (702). */
export type PayoutOutcome =
  | { status: 'SUCCEEDED'; railReference: string }
  | { status: 'FAILED'; reason: string }
  | { status: 'REVERSED'; reason: string }
  | { status: 'REFUNDED'; reason: string }
  | { status: 'PENDING' }
  | { status: 'JAMMED' };

/**
 * The mobile-money and bank payout rails behind one adapter. Both calls are idempotent by payout id: submitting
 * the same payout again (a retried job after a crash) returns the outcome of the first submission.
 */
export interface PayoutRail {
  /** Why the rail cannot take this payout (its amount, currency or bank), checked before acceptance; or null. */
  acceptanceProblem(payout: PayoutForAcceptance): string | null;
  /** The real operator that takes payouts to this destination (whose circuit acceptance asks), or null for a simulator. */
  operatorFor(destination: PayoutDestination): Operator | null;
  /** How long after acceptance a payout is submitted (the sandbox's SANDBOX_SETTLE_DELAY_MS; 0 for a real rail). */
  settleDelayMs(): number;
  /** Submits the payout (or finds the earlier submission) and answers where it stands. */
  submit(payout: PayoutAtRail): Promise<PayoutOutcome>;
  /** Re-queries a submitted payout (reconciliation of pending and jammed payouts). */
  outcomeOf(payout: PayoutAtRail): Promise<PayoutOutcome>;
}

export const PAYOUT_RAIL = Symbol('PAYOUT_RAIL');
