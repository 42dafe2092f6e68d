import { Money } from '../common/money';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from './payment';

export const CHECKOUT_STATUS = {
  PAID: 801,
  PART_PAID: 802,
  UNPAID: 803,
  EXPIRED: 820,
  REVERSED: 840,
  JAMMED: 850,
  PROCESSING: 851,
} as const;

/** A hosted-checkout session as stored (table checkout_sessions), with its client's and service's names. */
export interface CheckoutSessionRow {
  id: string;
  checkout_reference: string;
  client_id: string;
  client_code: string;
  client_name: string;
  client_service_id: string;
  service_code: string;
  merchant_transaction_id: string;
  request_fingerprint: string;
  amount: string;
  currency: string;
  payer_name: string;
  payer_email: string;
  payer_msisdn: string;
  account_number: string;
  narration: string;
  callback_url: string;
  redirect_url: string;
  extra_data: Record<string, unknown>;
  split_settlements: unknown;
  status: number;
  expires_at: Date;
  created_at: Date;
}

export const SELECT_CHECKOUT = `
  SELECT cs.*, c.code AS client_code, c.name AS client_name, s.code AS service_code
  FROM checkout_sessions cs JOIN clients c ON c.id = cs.client_id JOIN client_services s ON s.id = cs.client_service_id`;

/** Checkout amounts are whole major units and are echoed exactly as sent. */
export function wholeAmount(amount: string): number {
  return Number(amount.split('.')[0]);
}

/**
 * The checkout callback and status shape (collection document §2), with its payments. Settlements build it in SQL
 * (checkout_result_payload, migration CheckoutSettlementOneCall): change both; test/payments/checkout-result-payload
 * holds them equal.
 */
export function checkoutResult(session: CheckoutSessionRow, payments: PaymentRow[]) {
  return {
    amount: String(wholeAmount(session.amount)),
    checkout_reference: session.checkout_reference,
    currency: session.currency,
    merchant_transaction_id: session.merchant_transaction_id,
    narration: session.narration,
    payments: payments.filter((p) => p.payment_status !== PAYMENT_STATUS.PENDING).map(checkoutPaymentRecord),
    status: session.status,
    timestamp: new Date().toISOString(),
  };
}

function checkoutPaymentRecord(payment: PaymentRow) {
  return { ...paymentResult(payment), payment_status: payment.payment_status, payment_account_reference: payment.payer_msisdn };
}

/** What the session's successful payments add up to (checkout_follow_payments sums the same in SQL). */
export function paidAmount(payments: PaymentRow[]): Money {
  return payments
    .filter((p) => p.payment_status === PAYMENT_STATUS.SUCCESSFUL)
    .reduce((sum, p) => sum.plus(p.service_amount), new Money(0));
}

/** A session the payer may still pay: unpaid or part paid. */
export function isOpen(session: CheckoutSessionRow): boolean {
  return session.status === CHECKOUT_STATUS.UNPAID || session.status === CHECKOUT_STATUS.PART_PAID;
}
