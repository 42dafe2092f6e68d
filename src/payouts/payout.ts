import { formatAmount } from '../common/money';
import type { PayoutAtRail, PayoutDestination } from '../rails/payout.rail';

/** payouts.kind: local payouts, international transfers (IMT) and B2B share one table and reference namespace. */
export const PAYOUT_KINDS = ['LOCAL', 'IMT', 'B2B'] as const;
export type PayoutKind = (typeof PAYOUT_KINDS)[number];

/**
 * Payment status codes of the disbursement document §3 (payouts.status; a payout starts PENDING); 705 (refunded) is
 * B2B only.
 */
export const PAYOUT_STATUS = {
  SUCCESSFUL: 700,
  FAILED: 701,
  REVERSED: 702,
  PENDING: 703,
  JAMMED: 704,
  REFUNDED: 705,
} as const;
export type PayoutStatus = (typeof PAYOUT_STATUS)[keyof typeof PAYOUT_STATUS];

/** Pending and jammed payouts keep their hold; every other status is final. */
export function isFinal(status: number): boolean {
  return status !== PAYOUT_STATUS.PENDING && status !== PAYOUT_STATUS.JAMMED;
}

/** A payout as stored (table payouts), with the float's account number. */
export interface PayoutRow {
  id: string;
  client_id: string;
  kind: PayoutKind;
  payout_reference: string;
  client_service_id: string;
  float_account_id: string;
  float_account_number: string;
  hold_id: string;
  amount: string;
  fee: string;
  currency: string;
  /** An IMT's recipient_amount in destination_currency; null for LOCAL and B2B. */
  recipient_amount: string | null;
  recipient_currency: string | null;
  status: PayoutStatus;
  destination_type: PayoutDestination;
  destination_name: string;
  recipient_account_number: string;
  recipient_phone_number: string | null;
  recipient_bank_code: string | null;
  /** The validated request body, for the fields a result echoes. */
  request: Record<string, string | undefined>;
  callback_url: string;
  rail_reference: string | null;
  result_description: string | null;
  float_balance_after: string | null;
  transaction_time: Date | null;
  checked_at: Date | null;
  created_at: Date;
}

export const SELECT_PAYOUT = `
  SELECT p.*, a.account_number AS float_account_number
  FROM payouts p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.float_account_id`;

/**
 * How the rail sees the payout: a MOBILE payout goes to the phone number, everything else to the account number. An
 * IMT pays the recipient's amount in the recipient's currency; LOCAL and B2B pay what the float pays out.
 */
export function payoutAtRail(payout: PayoutRow): PayoutAtRail {
  return {
    payoutId: payout.id,
    clientId: payout.client_id,
    destination: payout.destination_type,
    destinationName: payout.destination_name,
    recipientName: payout.request.recipient_account_name ?? payout.request.recipient_name ?? payout.destination_name,
    recipientNumber: payout.destination_type === 'MOBILE' ? payout.recipient_phone_number! : payout.recipient_account_number,
    bankCode: payout.recipient_bank_code,
    accountReference: payout.destination_type === 'PAYBILL' ? (payout.request.payment_account_reference ?? null) : null,
    amount: payout.recipient_amount ?? payout.amount,
    currency: payout.recipient_currency ?? payout.currency,
  };
}

const DESCRIPTIONS: Record<PayoutStatus, string> = {
  700: 'Processed successfully',
  701: 'Failed',
  702: 'Reversed',
  703: 'Pending',
  704: 'Jammed: manual intervention needed',
  705: 'Refunded',
};

function resultDescription(payout: PayoutRow): string {
  return payout.result_description ?? DESCRIPTIONS[payout.status];
}

/** Until the rail answers, the acceptance time stands in, so the field is always an ISO 8601 time. */
function transactionTime(payout: PayoutRow): string {
  return (payout.transaction_time ?? payout.created_at).toISOString();
}

const DESTINATIONS: Record<PayoutDestination, string> = {
  MOBILE: 'mobile_wallet',
  BANK: 'bank_account',
  PAYBILL: 'paybill',
  TILL: 'till',
  BANK_ACCOUNT_NUMBER: 'bank_account',
};

/** The payout result of a local payout or IMT (disbursement document §2): callback and status response. */
export function payoutResult(payout: PayoutRow) {
  const request = payout.request;
  const description = resultDescription(payout);
  return {
    payout_reference: payout.payout_reference,
    destination: DESTINATIONS[payout.destination_type],
    data: {
      payment_id: Number(payout.id),
      wallet_account_number: payout.float_account_number,
      transaction_cost: formatAmount(payout.fee),
      wallet_balance: payout.float_balance_after === null ? null : formatAmount(payout.float_balance_after),
      reference: payout.rail_reference,
      payment_status: payout.status,
      amount: formatAmount(payout.amount),
      currency: payout.currency,
      account_number: payout.recipient_account_number,
      destination_name: payout.destination_name,
      payout_description: request.payment_description ?? null,
      transaction_time: transactionTime(payout),
      ...(payout.destination_type === 'BANK' ? { bank_code: payout.recipient_bank_code } : {}),
      result_description: description,
      message: description,
      recipient_first_name: request.recipient_first_name ?? null,
      recipient_middle_name: request.recipient_middle_name ?? null,
      recipient_last_name: request.recipient_last_name ?? null,
      recipient_phone_number: payout.recipient_phone_number,
    },
  };
}

/** The B2B result (disbursement document §2): callback and status response. */
export function b2bResult(payout: PayoutRow) {
  return {
    payout_reference: payout.payout_reference,
    transaction_id: payout.id,
    payment_reference: payout.rail_reference,
    wallet_account: payout.float_account_number,
    destination: DESTINATIONS[payout.destination_type],
    payment_status: payout.status,
    amount: formatAmount(payout.amount),
    currency: payout.currency,
    account_number: payout.recipient_account_number,
    destination_name: payout.request.recipient_name ?? null,
    description: payout.request.payment_description ?? null,
    transaction_time: transactionTime(payout),
    account_balance: payout.float_balance_after === null ? null : formatAmount(payout.float_balance_after),
    result_description: resultDescription(payout),
  };
}

/** The result in the shape of the payout's kind, with the callback event name. */
export function resultOf(payout: PayoutRow): { event: string; payload: Record<string, unknown> } {
  return payout.kind === 'B2B'
    ? { event: 'b2b_result', payload: b2bResult(payout) }
    : { event: 'payout_result', payload: payoutResult(payout) };
}
