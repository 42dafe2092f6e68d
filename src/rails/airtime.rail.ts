import type { Operator } from './rail-health';

/** One top-up as the airtime provider sees it. */
export interface AirtimeTopUp {
  /** Our recipient's id: the subject of the rail's record of the top-up. */
  recipientId: string;
  /** The recipient's client: the operator's record of the top-up is kept with it. */
  clientId: string;
  /** Our id of the top-up, the same on every ask, so that asking again never tops up twice. */
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
 * without touching the ledger or the API. Both calls take top-ups of one request (distinct numbers) and answer
 * each one's outcome in the same order, so a provider that tops up many numbers per call can batch them. `topUp` is
 * idempotent per top-up: asking again returns where it stands, never a second top-up.
 */
export interface AirtimeRail {
  /** The real provider (whose circuit acceptance asks), or null for a simulator. */
  readonly operator: Operator | null;
  /** How long after acceptance the provider is asked, so the result is ready then. */
  settleDelayMs(): number;
  topUp(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]>;
  /** Where top-ups stand now (reconciliation of recipients left processing or jammed, and operators' answers). */
  outcomeOf(topUps: AirtimeTopUp[]): Promise<AirtimeOutcome[]>;
}

export const AIRTIME_RAIL = Symbol('AIRTIME_RAIL');
