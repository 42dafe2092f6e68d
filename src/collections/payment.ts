import { formatAmount } from '../common/money';

/** A mobile-money payment as stored (table payments), with its client's and service's codes. */
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
  /** The collection's ledger entry, once successful. */
  entry_id: string | null;
  split_settlements: SplitShare[] | null;
  split_status: 'DISTRIBUTED' | 'DECLINED' | null;
  acknowledged_at: Date | null;
  settled_at: Date | null;
  created_at: Date;
}

/**
 * A payment's columns as its request gives them: a direct charge's body, or the payer's payment of a checkout session;
 * recorded as a payments row by collection_record_payment (src/collections/sql/collection_record_payment.sql).
 */
export type PaymentAsRequested = Pick<
  PaymentRow,
  | 'external_reference'
  | 'payer_msisdn'
  | 'account_number'
  | 'currency'
  | 'country_code'
  | 'service_amount'
  | 'transaction_charge'
  | 'add_transaction_charge'
  | 'payment_method_code'
  | 'extra_data'
  | 'description'
  | 'notify_client'
  | 'notify_originator'
  | 'callback_url'
  | 'next_step'
> & { origin_channel_code: string; originator_msisdn: string; payer_name: string | null; payer_email: string; invoice_number: string };

/** A validated split settlement carried by a payment: the partner wallet and its exact share. */
export interface SplitShare {
  account: string;
  accountId: string;
  amount: string;
  reason: string;
}

export const PAYMENT_STATUS = {
  SUCCESSFUL: 700,
  FAILED: 701,
  REVERSED: 702,
  PENDING: 703,
  JAMMED: 704,
} as const;

/** The charge result as paymentResult builds it. */
export type PaymentResultBody = ReturnType<typeof paymentResult>;

/**
 * The charge callback shape, also answered by the status query: strings throughout, as the document shows,
 * plus payment_id (= transaction_id), which POST /transactions/acknowledge takes. A checkout's result lists its
 * payments in this shape in SQL (checkout_result_payload, src/collections/sql/checkout_result_payload.sql), with a
 * numeric payment_status: test/collections/checkout-result-payload.e2e.spec.ts holds the two equal.
 */
export function paymentResult(payment: PaymentRow) {
  const event =
    payment.payment_status === PAYMENT_STATUS.SUCCESSFUL
      ? 'successful_payment'
      : payment.payment_status === PAYMENT_STATUS.FAILED
        ? 'failed_payment'
        : payment.payment_status === PAYMENT_STATUS.REVERSED
          ? 'reversed_payment'
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
