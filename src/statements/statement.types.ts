import Decimal from 'decimal.js';
import { Money } from '../common/money';

export const DOC_TYPES = ['EXCEL', 'PDF'] as const;
export type DocType = (typeof DOC_TYPES)[number];

export const STATEMENT_CONTENT_TYPES: Record<DocType, { contentType: string; extension: string }> = {
  EXCEL: { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extension: 'xlsx' },
  PDF: { contentType: 'application/pdf', extension: 'pdf' },
};

/** What the statement says about the wallet and the period, known before the first row is written. */
export interface StatementHeader {
  accountNumber: string;
  accountName: string;
  currency: string;
  ownerName: string;
  clientName: string;
  /** First instant of the period (inclusive). */
  from: Date;
  /** Last instant of the period as the caller gave it (inclusive, millisecond precision). */
  to: Date;
  /** Balance before the first posting of the period, as a numeric(20,4) string. */
  openingBalance: string;
  generatedAt: Date;
}

/** One wallet posting in the period, with the transaction record it belongs to (when there is one). */
export interface StatementRow {
  bookedAt: Date;
  transactionId: string | null;
  narration: string;
  source: string;
  /** Signed posting amount: negative is a debit, positive a credit (numeric string). */
  amount: string;
  /** The wallet's balance right after this posting (postings.balance_after). */
  balanceAfter: string;
}

/** The rows of a statement, read in batches from a server-side cursor. */
export interface StatementRows {
  /** The next batch in booking order; an empty array when there are no more rows. */
  next(): Promise<StatementRow[]>;
}

/** Running totals: sums of debits and credits and the last running balance, in decimal arithmetic only. */
export class StatementTotals {
  debits: Decimal = new Money(0);
  credits: Decimal = new Money(0);
  closing: Decimal;
  rows = 0;

  constructor(openingBalance: string) {
    this.closing = new Money(openingBalance);
  }

  /** Adds a row; returns its debit and credit amounts as unsigned numeric strings (one of them empty). */
  add(row: StatementRow): { debit: string | null; credit: string | null } {
    const amount = new Money(row.amount);
    this.rows++;
    this.closing = new Money(row.balanceAfter);
    if (amount.isNegative()) {
      this.debits = this.debits.minus(amount);
      return { debit: amount.neg().toFixed(4), credit: null };
    }
    this.credits = this.credits.plus(amount);
    return { debit: null, credit: amount.toFixed(4) };
  }
}

/** ISO date-time in UTC without milliseconds: "2025-01-31 14:05:09". */
export function displayTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function displayDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
