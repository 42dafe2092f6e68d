import { maskNumber } from '../common/masking';
import { JOURNAL_ENTRY_KIND } from '../ledger/journal-entry-kind';

/**
 * Readable names for what moved money, as an accountant reads a statement: the wallet transaction sources
 * (transaction_source), the gateway records' kinds (the statement's rows query names them) and, for a posting
 * without a record, its journal entry kind.
 */
const SOURCE_LABELS: Record<string, string> = {
  EXTERNAL_CREDIT: 'Credit',
  EXTERNAL_DEBIT: 'Debit',
  INTERNAL_TRANSFER_CREDIT: 'Transfer in',
  INTERNAL_TRANSFER_DEBIT: 'Transfer out',
  INTERNAL_REVERAL_CREDIT: 'Reversal',
  INTERNAL_REVERAL_DEBIT: 'Reversal',
  [JOURNAL_ENTRY_KIND.PAYMENT]: 'Collection',
  [JOURNAL_ENTRY_KIND.PAYMENT_SPLIT]: 'Split settlement',
  [JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL]: 'Collection reversal',
  [JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL_COMPENSATION]: 'Reversal undone',
  // Disbursements on the float wallet: the reservation (the money leaving) and the refund of a failed one.
  PAYOUT_LOCAL: 'Payout to',
  PAYOUT_IMT: 'IMT payout to',
  PAYOUT_B2B: 'B2B payout to',
  PAYOUT_REFUND: 'Payout refund',
  AIRTIME: 'Airtime',
  AIRTIME_REFUND: 'Airtime refund',
};

/** Sources whose label ends with the recipient's (masked) number. */
const NAMES_RECIPIENT = new Set(['PAYOUT_LOCAL', 'PAYOUT_IMT', 'PAYOUT_B2B']);
/** Sources whose narration starts with the topped-up (masked) number. */
const TOP_UPS = new Set(['AIRTIME', 'AIRTIME_REFUND']);

export const FEE_SOURCE = 'Fee';

/** The label of a source or entry kind; a code without one reads as words ("PAYOUT_REVERSAL" → "Payout reversal"). */
export function readableSource(code: string, recipient: string | null = null): string {
  const label = SOURCE_LABELS[code];
  if (label) return recipient !== null && NAMES_RECIPIENT.has(code) ? `${label} ${maskNumber(recipient)}` : label;
  const words = code.toLowerCase().replace(/_/g, ' ').trim();
  return words ? `${words[0].toUpperCase()}${words.slice(1)}` : '';
}

/** A line's narration: the record's own, after the topped-up number for airtime ("Top-up of 2547*****678: …"). */
export function readableNarration(code: string, narration: string, recipient: string | null): string {
  if (recipient === null || !TOP_UPS.has(code)) return narration;
  const topUp = `Top-up of ${maskNumber(recipient)}`;
  return narration ? `${topUp}: ${narration}` : topUp;
}
