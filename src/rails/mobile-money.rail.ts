/** What the payer must do before the operator debits them. */
export type ChargeChallenge = 'NONE' | 'VERIFY_OTP' | 'AUTHORIZE_TRANSACTION';

/** Where a submitted charge stands at the operator. */
export type ChargeOutcome =
  { status: 'SUCCEEDED'; operatorReference: string } | { status: 'FAILED'; reason: string } | { status: 'PENDING' } | { status: 'JAMMED' };

export interface ChargeAtRail {
  paymentId: string;
  payerMsisdn: string;
  amount: string;
  currency: string;
}

/**
 * A mobile-money operator. The sandbox simulator plays one; a real operator's adapter replaces it in production
 * without touching the ledger or the API.
 */
export interface MobileMoneyRail {
  /** How the payer authorises the charge; decided when the charge is accepted. */
  challengeFor(charge: ChargeAtRail): ChargeChallenge;
  /** Checks an OTP the payer entered. */
  verifyOtp(charge: ChargeAtRail, otp: string): Promise<boolean>;
  /** How long after submission the operator settles, so the result is looked up then. */
  settleDelayMs(): number;
  /** Asks the operator for the charge's result. */
  outcomeOf(charge: ChargeAtRail): Promise<ChargeOutcome>;
  /** Sends a settled charge's money back to the payer. */
  refund(charge: ChargeAtRail): Promise<{ status: 'SUCCEEDED'; operatorReference: string } | { status: 'FAILED'; reason: string }>;
}

export const MOBILE_MONEY_RAIL = Symbol('MOBILE_MONEY_RAIL');
