import { formatAmount } from '../common/money';

/** A mobile-money payment as stored (table payments). */
export interface PaymentRow {
  id: string;
  client_id: string;
  client_code: string;
  client_service_id: string;
  checkout_session_id: string | null;
  service_code: string;
  external_reference: string;
  request_fingerprint: string;
  payer_msisdn: string;
  account_number: string;
  currency: string;
  country_code: string;
  service_amount: string;
  transaction_charge: string;
  total_amount: string;
  merchant_fee: string;
  add_transaction_charge: boolean;
  payment_method_code: string;
  extra_data: Record<string, unknown>;
  description: string;
  notify_client: boolean;
  notify_originator: boolean;
  callback_url: string;
  next_step: 'VERIFY_OTP' | 'AUTHORIZE_TRANSACTION' | null;
  payment_url: string | null;
  otp_failures: number;
  otp_verified_at: Date | null;
  payment_status: number;
  payer_transaction_id: string | null;
  settled_at: Date | null;
  created_at: Date;
}

export const PAYMENT_STATUS = {
  SUCCESSFUL: 700,
  FAILED: 701,
  REVERSED: 702,
  PENDING: 703,
  JAMMED: 704,
} as const;

export const SELECT_PAYMENT = `
  SELECT p.*, c.code AS client_code, s.code AS service_code
  FROM payments p JOIN clients c ON c.id = p.client_id JOIN client_services s ON s.id = p.client_service_id`;

/** The charge acceptance response (collection document §2). */
export function chargeResponse(payment: PaymentRow) {
  return {
    status_code: 176,
    status_description: 'Charge posted successfully',
    total_amount: formatAmount(payment.total_amount),
    service_amount: formatAmount(payment.service_amount),
    transaction_charge: formatAmount(payment.transaction_charge),
    charge_request_id: Number(payment.id),
    external_reference: payment.external_reference,
    payment_url: payment.payment_url,
    next_step: payment.next_step,
  };
}

/**
 * The charge callback shape, also answered by the status query: strings throughout, as the document shows,
 * plus payment_id (= transaction_id), which POST /transactions/acknowledge takes.
 */
export function paymentResult(payment: PaymentRow) {
  const event =
    payment.payment_status === PAYMENT_STATUS.SUCCESSFUL ? 'successful_payment'
    : payment.payment_status === PAYMENT_STATUS.FAILED ? 'failed_payment'
    : payment.payment_status === PAYMENT_STATUS.REVERSED ? 'reversed_payment'
    : 'pending_payment';
  return {
    event,
    amount: formatAmount(payment.service_amount),
    extra_data: payment.extra_data,
    client_code: payment.client_code,
    country_code: payment.country_code,
    payer_msisdn: payment.payer_msisdn,
    payment_date: new Date(payment.settled_at ?? payment.created_at).toISOString(),
    service_code: payment.service_code,
    currency_code: payment.currency,
    account_number: payment.account_number,
    payment_status: String(payment.payment_status),
    transaction_id: String(payment.id),
    payment_id: String(payment.id),
    payer_narration: payment.description,
    charge_request_id: String(payment.id),
    external_reference: payment.external_reference,
    receiver_narration: payment.description,
    payment_method_code: payment.payment_method_code,
    payer_transaction_id: payment.payer_transaction_id ?? '',
  };
}
