import { DataSource } from 'typeorm';
import { BatchedCall } from '../infra/database/batched-call';
import { PreparedStatement } from '../infra/database/prepared';
import { CheckoutSessionRow } from '../collections/checkout-session';
import { CollectionAnswer } from '../collections/collecting-service';
import { SplitRefusal, SplitRequest } from '../split-settlements/split-settlements.service';

/**
 * A checkout session to open: collection_initiate_checkout's arguments by name
 * (src/checkout/sql/collection_initiate_checkout.sql).
 */
export interface CheckoutInitiationItem {
  service_code: string;
  fingerprint: string;
  /** The caller's own check that failed: REQUEST (a redirect or callback URL), SPLITS (the split list's shape), or none. */
  caller_check: 'REQUEST' | 'SPLITS' | null;
  /** The session's columns as the request gives them (jsonb_populate_record on checkout_sessions). */
  session: Pick<
    CheckoutSessionRow,
    | 'checkout_reference'
    | 'merchant_transaction_id'
    | 'amount'
    | 'payer_name'
    | 'payer_email'
    | 'payer_msisdn'
    | 'account_number'
    | 'narration'
    | 'callback_url'
    | 'redirect_url'
    | 'extra_data'
    | 'expires_at'
  >;
  splits: SplitRequest[] | null;
  expire_topic: string;
}

/** The session as the initiation response shows it. */
export type InitiatedCheckout = Pick<
  CheckoutSessionRow,
  'merchant_transaction_id' | 'checkout_reference' | 'currency' | 'amount' | 'expires_at'
>;

const INITIATE_CHECKOUTS: PreparedStatement = {
  name: 'collection_initiate_checkouts',
  text: 'SELECT * FROM collection_initiate_checkouts(p_client_id => $1, p_items => $2)',
};

/**
 * collection_initiate_checkouts (src/checkout/sql/collection_initiate_checkouts.sql): checkout initiation by group
 * commit, the sessions a process opens at the same moment sent as one call of the batch form.
 */
export function checkoutInitiation(db: DataSource): BatchedCall<CollectionAnswer<InitiatedCheckout, SplitRefusal>, CheckoutInitiationItem> {
  return new BatchedCall(db, INITIATE_CHECKOUTS);
}
