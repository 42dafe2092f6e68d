/** One top-up as the airtime provider sees it. */
export interface AirtimeTopUp {
  /** Our id of the top-up, sent to the provider so that asking again never tops up twice. */
  correlationId: string;
  phoneNumber: string;
  amount: string;
  currency: string;
}

/** Where a top-up stands at the provider. */
export type AirtimeOutcome =
  | { status: 'SUCCESSFUL'; providerReference: string }
  | { status: 'FAILED'; reason: string }
  | { status: 'PROCESSING' }
  | { status: 'JAMMED' };

/**
 * An airtime provider. The sandbox simulator plays one; a real provider's adapter replaces it in production
 * without touching the ledger or the API. `topUp` is idempotent on the correlation id: asking again for the same
 * top-up returns where it stands, never a second top-up.
 */
export interface AirtimeRail {
  /** How long after acceptance the provider is asked, so the result is ready then. */
  settleDelayMs(): number;
  topUp(topUp: AirtimeTopUp): Promise<AirtimeOutcome>;
  /** Re-queries a top-up by its correlation id (reconciliation of recipients left processing or jammed). */
  outcomeOf(topUp: AirtimeTopUp): Promise<AirtimeOutcome>;
}

export const AIRTIME_RAIL = Symbol('AIRTIME_RAIL');
