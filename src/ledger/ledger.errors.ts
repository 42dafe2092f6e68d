/** Raised when an entry's postings do not sum to zero per currency; a programming error, never a merchant's. */
export class UnbalancedEntryError extends Error {}

/** Raised when an entry names an account that does not exist or belongs to another client. */
export class UnknownLedgerAccountError extends Error {}

/** Raised when an entry to reverse does not exist or belongs to another client. */
export class UnknownLedgerEntryError extends Error {}

/** Raised when a posting would take an account below its floor (minimum_balance, unless can_overdraw). */
export class FloorBreachError extends Error {
  constructor(readonly accountNumber: string) {
    super(`account ${accountNumber} would go below its minimum balance`);
  }
}
