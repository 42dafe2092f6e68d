import type Decimal from 'decimal.js';

/**
 * The rails a reconciliation runs for, by the operator that plays each in production: M-Pesa (collections and mobile
 * payouts), Jenga (bank payouts) and Africa's Talking (airtime). Where the sandbox plays a rail, its simulator answers.
 */
export type ReconciledRail = 'mpesa' | 'jenga' | 'africastalking';

/** A period of a reconciliation: from inclusive, to exclusive (a UTC day by default). */
export interface ReconciliationPeriod {
  from: Date;
  to: Date;
}

export type MovementStatus = 'SUCCEEDED' | 'FAILED' | 'PENDING';

/** One movement of money as we hold it: a charge, a payout, a refund or a top-up we asked the operator for. */
export interface OurMovement {
  kind: 'CHARGE' | 'REFUND' | 'PAYOUT' | 'AIRTIME';
  /** Our record: the payment, reversal, payout or airtime recipient id. */
  recordId: string;
  clientId: string;
  /** The reference we gave the operator with the request (what its rows may echo back). */
  ourReference: string;
  /** The operator's own reference, once it answered (M-Pesa receipt, Jenga transaction id, AT transaction id). */
  operatorReference: string | null;
  /** The recipient's or payer's number, as the operator knows it (MSISDN or account). */
  counterparty: string | null;
  amount: Decimal;
  currency: string;
  /** IN: money into the operator account we hold there (a charge); OUT: money out of it (payouts, refunds, top-ups). */
  direction: 'IN' | 'OUT';
  status: MovementStatus;
  at: Date;
}

/** One movement as the operator reports it, with its row as received kept as evidence. */
export interface OperatorMovement {
  operatorReference: string;
  /** Our reference when the operator's row carries it, else null. */
  ourReference: string | null;
  counterparty: string | null;
  /** Always positive; the direction says which way. */
  amount: Decimal;
  currency: string;
  direction: 'IN' | 'OUT';
  status: MovementStatus;
  at: Date;
  evidence: Record<string, unknown>;
}

/** The operator's reported balance of the account or application our money sits in. */
export interface OperatorBalance {
  amount: Decimal;
  currency: string;
  at: Date;
  evidence: Record<string, unknown>;
}

/**
 * What an operator says it moved, through its documented listing and confirmation calls (Daraja Pull Transactions,
 * Transaction Status and Account Balance; Jenga's account full statement and balance; Africa's Talking's transaction
 * find and application balance). Implementations page through everything and retry what the operator documents as
 * retryable; an operator that cannot answer throws, and the run is recorded as incomplete, never as matched.
 */
export interface OperatorStatement {
  readonly rail: ReconciledRail;
  /**
   * Every movement the operator reports for the period. `ours` is what we hold for the same period: an operator that
   * only confirms one transaction at a time (Africa's Talking find, Daraja Transaction Status) is asked about each.
   */
  movements(period: ReconciliationPeriod, ours: readonly OurMovement[]): Promise<OperatorMovement[]>;
  /** The balance now (Daraja answers on a result callback: the implementation awaits it within a time limit). */
  balance(): Promise<OperatorBalance>;
}

/** Nest token: the OperatorStatement of every rail, one each. */
export const OPERATOR_STATEMENTS = Symbol('OPERATOR_STATEMENTS');
