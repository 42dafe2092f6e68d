import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { countRows, dailyTotalsSql, DayTotals, Keyset, ListCount, ListFilter, ListQuery, ListSource, listRows } from '../common/listing';
import { PAYMENT_STATUS, PaymentAsRequested, PaymentRow } from './payment';

/**
 * A payment of a checkout session about to be recorded, as collection_record_payment takes it (a payments row by
 * name). Direct charges are recorded by their acceptance's SQL, collection_accept_charge, through the same function.
 */
export type NewPayment = PaymentAsRequested &
  Pick<PaymentRow, 'client_id' | 'client_service_id' | 'request_fingerprint' | 'merchant_fee' | 'split_settlements'> & {
    checkout_session_id: string;
  };

/** A payment as the portal lists and exports it. */
export interface PaymentListRow {
  id: string;
  /** created_at as Postgres text (exact to the microsecond), where the next page starts. */
  position_at: string;
  created_at: Date;
  external_reference: string;
  payer_msisdn: string;
  currency: string;
  /** What the payer pays: the amount, plus the transaction charge when the payer bears it. */
  amount: string;
  /** The fee the payment cost (CHARGED_FEE_SQL); null when it cost none (not successful). */
  fee: string | null;
  status: number;
  description: string;
  settled_at: Date | null;
}

/** A payment as the portal's detail page shows it. */
export interface PaymentDetail extends PaymentListRow {
  service_amount: string;
  transaction_charge: string;
  merchant_fee: string;
  add_transaction_charge: boolean;
  /** What the settlement wallet received (successful payments only). */
  net: string | null;
  payer_name: string | null;
  account_number: string;
  service_code: string;
  payment_method_code: string;
  payer_transaction_id: string | null;
  updated_at: Date;
}

/** One line of the payment statement, as stored. */
export interface StatementPaymentRow {
  id: string;
  payer_transaction_id: string | null;
  external_reference: string;
  account_number: string;
  service_amount: string;
  currency: string;
  payment_status: number;
  description: string;
  payment_method_code: string;
  /** The fee the payment cost (CHARGED_FEE_SQL), summed in numeric. */
  service_charge: string;
  service_code: string;
  created_at: Date;
  /** created_at as Postgres text (exact to the microsecond), where the next page starts. */
  position_at: string;
}

/**
 * The fee a payment has cost, as booked: the merchant's fee and the payer's transaction charge, once the payment
 * succeeded (700); NULL for a payment that failed, is still pending or was reversed (the reversal refunds the fee).
 * `p` is the payments row.
 */
const CHARGED_FEE_SQL = `CASE WHEN p.payment_status = ${PAYMENT_STATUS.SUCCESSFUL} THEN p.merchant_fee + p.transaction_charge END`;

/** The portal's list of payments: what the payer paid and the fee charged (CHARGED_FEE_SQL). */
const LIST: ListSource = {
  select: `p.id::text, p.created_at::text AS position_at, p.created_at, p.external_reference, p.payer_msisdn, p.currency,
    p.total_amount AS amount, ${CHARGED_FEE_SQL} AS fee, p.payment_status AS status, p.description, p.settled_at`,
  from: 'payments p WHERE p.client_id = $1',
  columns: {
    createdAt: 'p.created_at',
    id: 'p.id',
    idType: 'bigint',
    status: 'p.payment_status',
    reference: 'p.external_reference',
    phones: ['p.payer_msisdn'],
    amounts: ['p.service_amount', 'p.total_amount'],
  },
};

/** The created_at of the oldest payment still waiting for the operator's final answer (pending or jammed). */
export const OLDEST_UNRESOLVED_PAYMENT_SQL = `SELECT min(created_at) FROM payments
  WHERE payment_status IN (${PAYMENT_STATUS.PENDING}, ${PAYMENT_STATUS.JAMMED})`;

const SELECT_PAYMENT = `
  SELECT p.*, c.code AS client_code, s.code AS service_code
  FROM payments p JOIN clients c ON c.id = p.client_id
  JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id`;

const RECORD: PreparedStatement = {
  name: 'collection_record_payment',
  text: 'SELECT r.id FROM collection_record_payment(p => jsonb_populate_record(NULL::payments, $1)) r',
};

const FIND_MANY: PreparedStatement = { name: 'payments_find_many', text: `${SELECT_PAYMENT} WHERE p.id = ANY($1::bigint[])` };

const lockClause = (lock: boolean) => (lock ? 'FOR UPDATE OF p' : '');

/**
 * Every SQL statement on `payments`. Reads and the insert serve any collection service; the writes after the
 * insert are status changes and are called by PaymentsService only, which announces them in the same transaction.
 */
@Injectable()
export class PaymentsRepository {
  /**
   * collection_record_payment (src/collections/sql/collection_record_payment.sql): records a session's payment and
   * answers its id. A session's payments share its reference, so none is ever refused as a duplicate charge.
   */
  async insert(manager: EntityManager, payment: NewPayment): Promise<string> {
    const [row] = await runPrepared<{ id: string }>(manager, RECORD, [payment]);
    return row.id;
  }

  /** Payments by id, for a batch of worker jobs that hold only ids, without lock: one prepared statement. */
  findMany(db: DataSource, ids: string[]): Promise<PaymentRow[]> {
    return runPrepared<PaymentRow>(db, FIND_MANY, [ids]);
  }

  async byId(manager: EntityManager, clientId: string, id: string, lock = false): Promise<PaymentRow | null> {
    const [row] = await manager.query(`${SELECT_PAYMENT} WHERE p.client_id = $1 AND p.id = $2 ${lockClause(lock)}`, [clientId, id]);
    return row ?? null;
  }

  /** A direct charge by its external_reference (a checkout's payments share the session's reference). */
  async byChargeReference(manager: EntityManager, clientId: string, reference: string, lock = false): Promise<PaymentRow | null> {
    const [row] = await manager.query(
      `${SELECT_PAYMENT} WHERE p.client_id = $1 AND p.external_reference = $2 AND p.checkout_session_id IS NULL ${lockClause(lock)}`,
      [clientId, reference],
    );
    return row ?? null;
  }

  /**
   * The payment a reversal of `reference` is about, locked: a checkout's payments share its reference, and the
   * successful one is the one that can be reversed (then an already reversed one, then the latest).
   */
  async forReversal(manager: EntityManager, clientId: string, reference: string): Promise<PaymentRow | null> {
    const [row] = await manager.query(
      `${SELECT_PAYMENT} WHERE p.client_id = $1 AND p.external_reference = $2
       ORDER BY (p.payment_status = ${PAYMENT_STATUS.SUCCESSFUL}) DESC, (p.payment_status = ${PAYMENT_STATUS.REVERSED}) DESC, p.id DESC
       LIMIT 1 ${lockClause(true)}`,
      [clientId, reference],
    );
    return row ?? null;
  }

  /** The payments of a checkout session, oldest first. */
  ofSession(manager: EntityManager, sessionId: string): Promise<PaymentRow[]> {
    return manager.query(`${SELECT_PAYMENT} WHERE p.checkout_session_id = $1 ORDER BY p.id`, [sessionId]);
  }

  /**
   * A page of the client's payments created in [start, end], oldest first: `offset` rows into the period, or the
   * rows after a known one (a seek in the (client_id, created_at, id) index, whatever the page's depth).
   */
  statement(
    manager: EntityManager,
    clientId: string,
    page: { start: Date; end: Date; limit: number; from: { offset: number } | { after: Keyset } },
  ): Promise<StatementPaymentRow[]> {
    const params: unknown[] = [clientId, page.start, page.end, page.limit];
    const seek =
      'after' in page.from
        ? `AND (p.created_at, p.id) > ($${params.push(page.from.after.at)}::timestamptz, $${params.push(page.from.after.id)}::bigint)`
        : '';
    const skip = 'offset' in page.from ? `OFFSET $${params.push(page.from.offset)}` : '';
    return manager.query(
      `SELECT p.id, p.payer_transaction_id, p.external_reference, p.account_number, p.service_amount, p.currency,
         p.payment_status, p.description, p.payment_method_code, coalesce(${CHARGED_FEE_SQL}, 0) AS service_charge, s.code AS service_code,
         p.created_at, p.created_at::text AS position_at
       FROM payments p JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id
       WHERE p.client_id = $1 AND p.created_at >= $2 AND p.created_at <= $3 ${seek}
       ORDER BY p.created_at, p.id ${skip} LIMIT $4`,
      params,
    );
  }

  // Status changes: called by PaymentsService only.

  async markOtpVerified(manager: EntityManager, clientId: string, id: string): Promise<void> {
    await manager.query(`UPDATE payments SET otp_verified_at = now(), updated_at = now() WHERE client_id = $1 AND id = $2`, [clientId, id]);
  }

  async recordOtpFailures(manager: EntityManager, clientId: string, id: string, failures: number): Promise<void> {
    await manager.query(`UPDATE payments SET otp_failures = $3, updated_at = now() WHERE client_id = $1 AND id = $2`, [
      clientId,
      id,
      failures,
    ]);
  }

  async setStatus(manager: EntityManager, clientId: string, id: string, status: number): Promise<void> {
    await manager.query(`UPDATE payments SET payment_status = $3, updated_at = now() WHERE client_id = $1 AND id = $2`, [
      clientId,
      id,
      status,
    ]);
  }

  /** Makes a payment final as failed and returns the stored settlement time. */
  async markFailed(manager: EntityManager, clientId: string, id: string): Promise<Date> {
    const [[row]] = await manager.query(
      `UPDATE payments SET payment_status = $3, settled_at = now(), updated_at = now() WHERE client_id = $1 AND id = $2
       RETURNING settled_at`,
      [clientId, id, PAYMENT_STATUS.FAILED],
    );
    return row.settled_at;
  }

  /** The client's payments, newest first, filtered and keyset-paged (the portal's list and CSV export). */
  list(manager: EntityManager, clientId: string, query: ListQuery): Promise<PaymentListRow[]> {
    return listRows(manager, clientId, query, LIST);
  }

  /** How many of the client's payments the filter matches, and how many are newer than `first`. */
  count(manager: EntityManager, clientId: string, filter: ListFilter, first: Keyset | null): Promise<ListCount> {
    return countRows(manager, clientId, filter, LIST, first);
  }

  /** One of the client's payments as its detail page shows it; null when the client has none with this id. */
  async detail(manager: EntityManager, clientId: string, id: string): Promise<PaymentDetail | null> {
    if (!/^\d{1,18}$/.test(id)) return null;
    const [row] = await manager.query(
      `SELECT ${LIST.select}, p.service_amount, p.transaction_charge, p.merchant_fee, p.add_transaction_charge,
         CASE WHEN p.payment_status = ${PAYMENT_STATUS.SUCCESSFUL} THEN p.service_amount - p.merchant_fee END AS net,
         p.payer_name, p.account_number, s.code AS service_code, p.payment_method_code, p.payer_transaction_id, p.updated_at
       FROM payments p JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id
       WHERE p.client_id = $1 AND p.id = $2`,
      [clientId, id],
    );
    return row ?? null;
  }

  /** The client's payments per day of the last `days` days in `timeZone`, per currency (the portal's overview). */
  dailyTotals(manager: EntityManager, clientId: string, timeZone: string, days: number): Promise<DayTotals[]> {
    return manager.query(dailyTotalsSql('payments', 'total_amount', 'payment_status', PAYMENT_STATUS.SUCCESSFUL), [
      clientId,
      timeZone,
      days,
    ]);
  }
}
