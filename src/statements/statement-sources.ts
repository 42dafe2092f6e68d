/**
 * Readable names for what moved money, as an accountant reads a statement: the wallet transaction sources
 * (transaction_source) and, for postings of the gateways, the journal entry kinds.
 */
const SOURCE_LABELS: Record<string, string> = {
  EXTERNAL_CREDIT: 'Credit',
  EXTERNAL_DEBIT: 'Debit',
  INTERNAL_TRANSFER_CREDIT: 'Transfer in',
  INTERNAL_TRANSFER_DEBIT: 'Transfer out',
  INTERNAL_REVERAL_CREDIT: 'Reversal',
  INTERNAL_REVERAL_DEBIT: 'Reversal',
  PAYMENT: 'Collection',
  PAYMENT_SPLIT: 'Split settlement',
  COLLECTION_REVERSAL: 'Collection reversal',
  COLLECTION_REVERSAL_COMPENSATION: 'Reversal undone',
  // Disbursement gateway entries on the float wallet.
  FLOAT_RESERVE: 'Payout',
  FLOAT_RELEASE: 'Payout returned',
  FLOAT_SETTLE: 'Payout settled',
};

export const FEE_SOURCE = 'Fee';

/** The label of a source or entry kind; a code without one reads as words ("PAYOUT_REVERSAL" → "Payout reversal"). */
export function readableSource(code: string): string {
  const label = SOURCE_LABELS[code];
  if (label) return label;
  const words = code.toLowerCase().replace(/_/g, ' ').trim();
  return words ? `${words[0].toUpperCase()}${words.slice(1)}` : '';
}
