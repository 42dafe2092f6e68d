import { DataSource } from 'typeorm';
import { BatchedCall } from '../infra/database/batched-call';
import { PreparedStatement } from '../infra/database/prepared';
import { CollectionAnswer } from '../collections/collecting-service';
import { PaymentAsRequested, PaymentRow } from '../collections/payment';
import { SplitRefusal, SplitRequest } from '../split-settlements/split-settlements.service';

/** A charge to accept: collection_accept_charge's arguments by name (src/charges/sql/collection_accept_charge.sql). */
export interface ChargeAcceptanceItem {
  service_code: string;
  fingerprint: string;
  /** The caller's own check that failed: REQUEST (a callback URL), SPLITS (the split list's shape), or none. */
  caller_check: 'REQUEST' | 'SPLITS' | null;
  /** The payment's columns as the request gives them (jsonb_populate_record on payments). */
  charge: PaymentAsRequested;
  splits: SplitRequest[] | null;
  /** An AUTHORIZE_TRANSACTION charge's payment_url is this prefix and its id. */
  payment_url_prefix: string;
  /** The settlement job: its topic, and the key its payload names the payment by. */
  settle_topic: string;
  settle_key: string;
  settle_at: Date;
}

/** collection_accept_charge's answer: the charge as the acceptance response shows it, or the refusal. */
export type ChargeAcceptanceRow = CollectionAnswer<
  Pick<PaymentRow, 'id' | 'service_amount' | 'transaction_charge' | 'total_amount' | 'payment_url' | 'next_step'>,
  SplitRefusal
>;

const ACCEPT_CHARGES: PreparedStatement = {
  name: 'collection_accept_charges',
  text: 'SELECT * FROM collection_accept_charges(p_client_id => $1, p_items => $2)',
};

/**
 * collection_accept_charges (src/charges/sql/collection_accept_charges.sql): charge acceptance by group commit, the
 * charges a process accepts at the same moment sent as one call of the batch form.
 */
export function chargeAcceptance(db: DataSource): BatchedCall<ChargeAcceptanceRow, ChargeAcceptanceItem> {
  return new BatchedCall(db, ACCEPT_CHARGES);
}
