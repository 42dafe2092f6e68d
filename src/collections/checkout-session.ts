import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { PAYMENT_STATUS, PaymentResultBody, PaymentRow } from './payment';

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
  /** Whether its time is up, on the database clock (checkout_session_ended). */
  ended: boolean;
  created_at: Date;
}

export const SELECT_CHECKOUT = `
  SELECT cs.*, c.code AS client_code, c.name AS client_name, s.code AS service_code, checkout_session_ended(cs.expires_at) AS ended
  FROM checkout_sessions cs JOIN clients c ON c.id = cs.client_id
  JOIN client_services s ON s.client_id = cs.client_id AND s.id = cs.client_service_id`;

/** Checkout amounts are whole major units and are echoed exactly as sent. */
export function wholeAmount(amount: string): number {
  return Number(amount.split('.')[0]);
}

/** The checkout result (collection document §2): the checkout callback's body and the status query's answer. */
export interface CheckoutResultBody {
  amount: string;
  checkout_reference: string;
  currency: string;
  merchant_transaction_id: string;
  narration: string;
  payments: Array<Omit<PaymentResultBody, 'payment_status'> & { payment_status: number; payment_account_reference: string }>;
  status: number;
  timestamp: string;
}

const SESSION_BY_MERCHANT_ID: PreparedStatement = {
  name: 'checkout_session_by_merchant_id',
  text: 'SELECT cs.id FROM checkout_sessions cs WHERE cs.client_id = $1 AND cs.merchant_transaction_id = $2',
};

const RESULT: PreparedStatement = {
  name: 'checkout_result_payload',
  text: `SELECT checkout_result_payload($1, $2) AS result`,
};

/**
 * checkout_result_payload (src/collections/sql/checkout_result_payload.sql): a client's session's result by its merchant
 * transaction id, or null when it has none. JSON in the document's key order, as the settlement's callbacks build it.
 */
export async function checkoutResultOf(
  db: DataSource | EntityManager,
  clientId: string,
  merchantTransactionId: string,
): Promise<CheckoutResultBody | null> {
  // Found first, then shaped: on Citus a function reading shards may not run inside a query on a shard.
  const [session] = await runPrepared<{ id: string }>(db, SESSION_BY_MERCHANT_ID, [clientId, merchantTransactionId]);
  if (!session) return null;
  const [row] = await runPrepared<{ result: CheckoutResultBody }>(db, RESULT, [clientId, session.id]);
  return row.result;
}

/** What moved a session's payments (checkout_follow_payments' p_cause): a result, a reversal, or the session's end. */
export type SessionFollowCause = 'RESULT' | 'REVERSAL' | 'EXPIRY';

const FOLLOW: PreparedStatement = {
  name: 'checkout_follow_payments',
  text: 'SELECT checkout_follow_payments(p_client_id => $1, p_sessions => $2, p_cause => $3)',
};

/**
 * checkout_follow_payments (src/collections/sql/checkout_follow_payments.sql): the sessions move to the status their
 * payments give, each move announced by its checkout callback, under the sessions' row locks; in the caller's
 * transaction given its EntityManager, else as one call of its own.
 */
export async function followCheckoutSessions(
  db: DataSource | EntityManager,
  clientId: string,
  sessionIds: string[],
  cause: SessionFollowCause,
): Promise<void> {
  await runPrepared(db, FOLLOW, [clientId, sessionIds, cause]);
}

/**
 * What the session's successful payments add up to, for the payer's page and the amount it may still pay; the
 * session's status is checkout_follow_payments', which sums the same in SQL.
 */
export function paidAmount(payments: PaymentRow[]): Money {
  return payments
    .filter((p) => p.payment_status === PAYMENT_STATUS.SUCCESSFUL)
    .reduce((sum, p) => sum.plus(p.service_amount), new Money(0));
}

/** A session the payer may still pay, once its time is not up (isExpired): unpaid or part paid. */
export function isOpen(session: CheckoutSessionRow): boolean {
  return session.status === CHECKOUT_STATUS.UNPAID || session.status === CHECKOUT_STATUS.PART_PAID;
}

/**
 * A session that takes no more payment because its time is up: expired (820), or unpaid or part paid at its end (an
 * unpaid one is about to read 820, a part-paid one keeps 802). docs/decisions.md, "Checkout expiry: one rule, on the
 * database clock".
 */
export function isExpired(session: CheckoutSessionRow): boolean {
  return session.status === CHECKOUT_STATUS.EXPIRED || (isOpen(session) && session.ended);
}
