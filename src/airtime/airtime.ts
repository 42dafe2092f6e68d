import { Money } from '../common/money';
import { PAYOUT_CODES, PayoutError } from '../payout-requests/payout-error';

/** Airtime service_status codes (disbursement document §3; airtime_recipients.service_status, starting UNPROCESSED). */
export const SERVICE_STATUS = {
  UNPROCESSED: 600,
  PROCESSING: 601,
  SUCCESSFUL: 602,
  FAILED: 603,
  JAMMED: 604,
} as const;
export type ServiceStatus = (typeof SERVICE_STATUS)[keyof typeof SERVICE_STATUS];

/** Statuses a processing job asks the provider about. */
export const AWAITING_PROVIDER: readonly number[] = [SERVICE_STATUS.UNPROCESSED, SERVICE_STATUS.PROCESSING];

/** Final statuses: the hold has its outcome and the merchant is called back. */
export const FINAL_STATUSES: readonly number[] = [SERVICE_STATUS.SUCCESSFUL, SERVICE_STATUS.FAILED];

export const STATUS_MESSAGES: Record<ServiceStatus, string> = {
  600: 'Queued for processing',
  601: 'Processing at the provider',
  602: 'Airtime sent',
  603: 'Airtime could not be sent; amount and fee returned to the float',
  604: 'Stuck at the provider; the amount stays reserved until it is resolved',
};

/** The callback event of a recipient that reached a final status. */
export const AIRTIME_RESULT_EVENT = 'airtime_result';

/** A recipient as stored, with what its result needs from the request. */
export interface RecipientRow {
  id: string;
  request_id: string;
  client_id: string;
  reference: string;
  currency: string;
  position: number;
  phone_number: string;
  amount: string;
  fee: string;
  hold_id: string;
  float_account_id: string;
  correlation_id: string;
  service_status: ServiceStatus;
  provider_reference: string | null;
  message: string;
}

/** The per-recipient result of the document (§2): the callback payload and one item of the status array. */
export function recipientResult(row: RecipientRow) {
  return {
    phone_number: row.phone_number,
    // The document types the result amount as a number; requests are bounded by the service maximum, far below
    // where a JSON number loses a 4-decimal amount.
    amount: new Money(row.amount).toNumber(),
    service_status: row.service_status,
    external_reference: row.reference,
    provider_reference: row.provider_reference,
    correlation_id: row.correlation_id,
    message: row.message,
  };
}

/** Why a request was refused (721), with the response_description each one gets. */
const REJECTIONS = {
  VALIDATION_FAILED: 'Validation Failed',
  INVALID_PHONE_NUMBER: 'Validation Failed',
  SERVICE_NOT_ALLOWED: 'Invalid Service',
  INVALID_WALLET: 'Invalid Wallet',
  INSUFFICIENT_BALANCE: 'Insufficient Balance',
} as const;
export type RejectionCode = keyof typeof REJECTIONS;

/** 721 (HTTP 400): the request is refused and nothing was stored. */
export function airtimeRejection(reference: string | undefined, errorCode: RejectionCode, message: string): PayoutError {
  return PayoutError.rejected(errorCode, REJECTIONS[errorCode], reference, message);
}

/** 721 FAILED (HTTP 503) while the provider is down: the body of any airtime outage, saying which. */
export function airtimeUnavailable(reference: string, why: string): PayoutError {
  return new PayoutError(PAYOUT_CODES.REJECTED, 'FAILED', 'Service unavailable', reference, why, 503);
}

/** 722 (HTTP 409): the reference was used before; nothing new happens. */
export function airtimeDuplicate(reference: string): PayoutError {
  return PayoutError.duplicate(reference, 'Duplicate Ignored', 'An airtime request with this reference exists');
}

/** 723 (HTTP 404): no request of the caller's has this reference. */
export function airtimeNotFound(reference: string): PayoutError {
  return PayoutError.notFound(reference, 'Record Not Found', 'No airtime request with this reference');
}
