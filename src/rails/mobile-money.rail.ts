import type { Operator } from './rail-health';

/** What the payer must do before the operator debits them. */
export type ChargeChallenge = 'NONE' | 'VERIFY_OTP' | 'AUTHORIZE_TRANSACTION';

/** Where a submitted charge stands at the operator. */
export type ChargeOutcome =
  { status: 'SUCCEEDED'; operatorReference: string } | { status: 'FAILED'; reason: string } | { status: 'PENDING' } | { status: 'JAMMED' };

export interface ChargeAtRail {
  paymentId: string;
  /** The payment's client: the operator's record of the charge is kept with it. */
  clientId: string;
  payerMsisdn: string;
  amount: string;
  currency: string;
}

/** A settled charge's money sent back to the payer: our reversal, and the operator's receipt of the charge. */
export interface RefundAtRail {
  reversalId: string;
  charge: ChargeAtRail;
  operatorReference: string | null;
}

/** Where a refund stands at the operator. */
export type RefundOutcome =
  { status: 'SUCCEEDED'; operatorReference: string } | { status: 'FAILED'; reason: string } | { status: 'PENDING' };

/**
 * A mobile-money operator. The sandbox simulator plays one; a real operator's adapter replaces it in production
 * without touching the ledger or the API.
 */
export interface MobileMoneyRail {
  /** The real operator (whose circuit acceptance asks), or null for a simulator. */
  readonly operator: Operator | null;
  /** Why the operator cannot take this amount (what the payer pays), or null. */
  amountProblem(amount: string, currency: string): string | null;
  /** How the payer authorises the charge; decided when the charge is accepted. */
  challengeFor(charge: ChargeAtRail): ChargeChallenge;
  /** Checks an OTP the payer entered. */
  verifyOtp(charge: ChargeAtRail, otp: string): Promise<boolean>;
  /** How long after submission the operator settles, so the result is looked up then. */
  settleDelayMs(): number;
  /** Asks the operator for the charge's result. */
  outcomeOf(charge: ChargeAtRail): Promise<ChargeOutcome>;
  /**
   * Sends a settled charge's money back to the payer (once per reversal: asking again answers where it stands).
   * PENDING: the reversal's job runs again when the operator answers.
   */
  refund(refund: RefundAtRail): Promise<RefundOutcome>;
}

export const MOBILE_MONEY_RAIL = Symbol('MOBILE_MONEY_RAIL');
