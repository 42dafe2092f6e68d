/**
 * The kinds of journal entry: what kind of business record owns an entry (journal_entries.kind). The one list: the
 * SQL functions that post write these as literals, which test/ledger/journal-entry-kinds.spec.ts reads from their
 * source files and holds to this list both ways; TypeScript posts and reads them from here.
 */
export const JOURNAL_ENTRY_KIND = {
  /** wallet_money_batch: a credit, debit or transfer (its wallet operation). */
  WALLET_CREDIT: 'WALLET_CREDIT',
  WALLET_DEBIT: 'WALLET_DEBIT',
  WALLET_TRANSFER: 'WALLET_TRANSFER',
  /** wallet_fund: an operator's funding of a wallet. */
  WALLET_FUNDING: 'WALLET_FUNDING',
  /** wallet_reverse: the negation of a wallet operation's entry. */
  WALLET_REVERSAL: 'WALLET_REVERSAL',
  /** collection_settle_payments: a collected payment, settled. */
  PAYMENT: 'PAYMENT',
  /** split_acknowledge: a payment's split settlements, distributed. */
  PAYMENT_SPLIT: 'PAYMENT_SPLIT',
  /** CollectionReversalsService: a payment's entry undone, and that undone again when the operator's refund failed. */
  COLLECTION_REVERSAL: 'COLLECTION_REVERSAL',
  COLLECTION_REVERSAL_COMPENSATION: 'COLLECTION_REVERSAL_COMPENSATION',
  /** float_reserve: a payout's or airtime request's amount and fee, from the float into in-flight. */
  FLOAT_RESERVE: 'FLOAT_RESERVE',
  /** float_holds_resolve: a hold paid out (to SETTLEMENT and FEE_INCOME) or given back to the float. */
  FLOAT_SETTLE: 'FLOAT_SETTLE',
  FLOAT_RELEASE: 'FLOAT_RELEASE',
} as const;

export type JournalEntryKind = (typeof JOURNAL_ENTRY_KIND)[keyof typeof JOURNAL_ENTRY_KIND];
