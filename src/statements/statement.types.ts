import type Decimal from 'decimal.js';
import { minorUnits } from '../common/currencies';
import { Money } from '../common/money';

export const DOC_TYPES = ['EXCEL', 'PDF'] as const;
export type DocType = (typeof DOC_TYPES)[number];

export const STATEMENT_CONTENT_TYPES: Record<DocType, { contentType: string; extension: string }> = {
  EXCEL: { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extension: 'xlsx' },
  PDF: { contentType: 'application/pdf', extension: 'pdf' },
};

/** What the statement says about the wallet and the period, known before the first row is written. */
export interface StatementHeader {
  /** Who issues the statement (config ISSUER_NAME): in the title, and on every PDF page. */
  issuerName: string;
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
  /** Number of rows the statement will have (movements and fee lines): known for PDF only, to number its pages. */
  rowCount: number | null;
}

/**
 * One line of the statement: a wallet posting, or one of the two lines a posting with a fee is shown as (the
 * movement at its full amount, then the fee as it was booked, each with the running balance after it).
 */
export interface StatementRow {
  /** A wallet transaction's own time (its transaction_date); otherwise when the posting was booked. */
  occurredAt: Date;
  /** The merchant-facing id of the record (wallet transaction, payment); null for a posting without one. */
  transactionId: string | null;
  /** The merchant's own reference (source_transaction_id, external_reference, reversal_reference). */
  reference: string | null;
  narration: string;
  /** Readable kind of movement: "Transfer in", "Collection", "Fee", … */
  source: string;
  /** Signed amount: negative is a debit, positive a credit (numeric string, exact). */
  amount: string;
  /** The wallet's running balance right after this line (exact). */
  balanceAfter: string;
}

/** The rows of a statement, read in batches from a server-side cursor. */
export interface StatementRows {
  /** The next batch in booking order; an empty array when there are no more rows. */
  next(): Promise<StatementRow[]>;
}

/**
 * Running totals: sums of debits and credits and the last running balance, in exact decimal arithmetic on the
 * ledger's 4-decimal values (rounding happens only when an amount is displayed).
 */
export class StatementTotals {
  debits: Decimal = new Money(0);
  credits: Decimal = new Money(0);
  rows = 0;
  private closingBalance: string;

  constructor(openingBalance: string) {
    this.closingBalance = openingBalance;
  }

  /** The running balance after the last row added (the opening balance before any). */
  get closing(): Decimal {
    return new Money(this.closingBalance);
  }

  /** Adds a row; returns its debit and credit amounts, unsigned and exact (one of them null). */
  add(row: StatementRow): { debit: Decimal | null; credit: Decimal | null } {
    const amount = new Money(row.amount);
    this.rows++;
    this.closingBalance = row.balanceAfter;
    if (amount.isNegative()) {
      this.debits = this.debits.minus(amount);
      return { debit: amount.neg(), credit: null };
    }
    this.credits = this.credits.plus(amount);
    return { debit: null, credit: amount };
  }
}

/** The note every statement carries about how its amounts are shown. */
export function roundingNote(currency: string): string {
  const digits = minorUnits(currency);
  return (
    `Amounts in ${currency} are shown with ${digits} decimal${digits === 1 ? '' : 's'}, rounded half-up from the ledger's exact ` +
    'four-decimal values; totals and balances are computed from the exact values.'
  );
}

/** ISO date-time in UTC without milliseconds: "2025-01-31 14:05:09". */
export function displayTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function displayDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
