import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource } from 'typeorm';
import { SERVICE_STATUS } from '../airtime/airtime';
import { PAYMENT_STATUS } from '../collections/payment';
import { PAYOUT_STATUS } from '../payouts/payout';
import type { MovementStatus, OurMovement, ReconciledRail, ReconciliationPeriod } from '../rails/operator-statement';

/** A bank account number or bank destination goes by the bank rail; every other payout by the mobile-money operator. */
const BANK_DESTINATIONS = `('BANK', 'BANK_ACCOUNT_NUMBER')`;

/**
 * A value of the first request we made about a record at a real operator (the sandbox makes none: then the record's
 * own id is our reference and the record's operator reference stands). Our reference is what the operator's rows or
 * confirmations echo: the STK push's AccountReference (Pull's billreference), the OriginatorConversationID of a B2C,
 * B2B or reversal (Transaction Status); the operator's is its receipt, or for Africa's Talking the requestId its
 * find takes.
 */
const railRequest = (kind: string, id: string, client: string, column: string) =>
  `(SELECT ${column} FROM rail_requests r WHERE r.client_id = ${client} AND r.subject_kind = '${kind}' AND r.subject_id = ${id}::text
     ORDER BY r.created_at LIMIT 1)`;

/** Daraja's OriginatorConversationID of a request: ours for a B2C (echoed in its answer), Daraja's for a B2B or reversal. */
const CONVERSATION = 'coalesce(operator_conversation_id, id::text)';

/** Each source's rows in one shape: kind, record, client, references, counterparty, amount, currency, direction, status, time. */
const SOURCES: Record<ReconciledRail, string[]> = {
  mpesa: [
    `SELECT 'CHARGE' AS kind, p.id::text AS record_id, p.client_id, coalesce(${railRequest('PAYMENT', 'p.id', 'p.client_id', `request -> 'body' ->> 'AccountReference'`)}, p.id::text) AS our_reference,
            coalesce(${railRequest('PAYMENT', 'p.id', 'p.client_id', 'receipt')}, p.payer_transaction_id) AS operator_reference, p.payer_msisdn AS counterparty,
            p.total_amount AS amount, p.currency, 'IN' AS direction,
            CASE WHEN p.payment_status IN (${PAYMENT_STATUS.SUCCESSFUL}, ${PAYMENT_STATUS.REVERSED}) THEN 'SUCCEEDED' WHEN p.payment_status = ${PAYMENT_STATUS.FAILED} THEN 'FAILED' ELSE 'PENDING' END AS status,
            coalesce(p.settled_at, p.created_at) AS at
       FROM payments p
      WHERE coalesce(p.settled_at, p.created_at) >= $1 AND coalesce(p.settled_at, p.created_at) < $2`,
    `SELECT 'REFUND', v.id::text, v.client_id, coalesce(${railRequest('REVERSAL', 'v.id', 'v.client_id', CONVERSATION)}, v.id::text),
            coalesce(${railRequest('REVERSAL', 'v.id', 'v.client_id', 'receipt')}, v.provider_transaction_id),
            p.payer_msisdn, p.total_amount, p.currency, 'OUT',
            CASE v.status WHEN 'successful' THEN 'SUCCEEDED' WHEN 'failed' THEN 'FAILED' ELSE 'PENDING' END,
            coalesce(v.completed_at, v.created_at)
       FROM collection_reversals v JOIN payments p ON p.client_id = v.client_id AND p.id = v.payment_id
      WHERE coalesce(v.completed_at, v.created_at) >= $1 AND coalesce(v.completed_at, v.created_at) < $2`,
    payouts(`NOT IN ${BANK_DESTINATIONS}`, railRequest('PAYOUT', 'o.id', 'o.client_id', CONVERSATION)),
  ],
  // Jenga's statement rows carry our transfer.reference (the payout's id on 12 digits) in their description.
  jenga: [payouts(`IN ${BANK_DESTINATIONS}`, `lpad(o.id::text, 12, '0')`)],
  africastalking: [
    `SELECT 'AIRTIME' AS kind, a.id::text AS record_id, a.client_id,
            coalesce(${railRequest('AIRTIME', 'a.id', 'a.client_id', 'id::text')}, a.correlation_id::text) AS our_reference,
            coalesce(${railRequest('AIRTIME', 'a.id', 'a.client_id', 'coalesce(operator_request_id, receipt)')}, a.provider_reference) AS operator_reference,
            a.phone_number AS counterparty, a.amount, q.currency, 'OUT' AS direction,
            CASE a.service_status WHEN ${SERVICE_STATUS.SUCCESSFUL} THEN 'SUCCEEDED' WHEN ${SERVICE_STATUS.FAILED} THEN 'FAILED' ELSE 'PENDING' END AS status,
            coalesce(a.resolved_at, q.created_at) AS at
       FROM airtime_recipients a JOIN airtime_requests q ON q.client_id = a.client_id AND q.id = a.request_id
      WHERE coalesce(a.resolved_at, q.created_at) >= $1 AND coalesce(a.resolved_at, q.created_at) < $2`,
  ],
};

function payouts(destination: string, ourReference: string): string {
  // Aliased: the bank rail's listing is this statement alone.
  return `SELECT 'PAYOUT' AS kind, o.id::text AS record_id, o.client_id, coalesce(${ourReference}, o.id::text) AS our_reference,
            coalesce(${railRequest('PAYOUT', 'o.id', 'o.client_id', 'receipt')}, o.rail_reference) AS operator_reference,
            coalesce(o.recipient_phone_number, o.recipient_account_number) AS counterparty, coalesce(o.recipient_amount, o.amount) AS amount,
            coalesce(o.recipient_currency, o.currency) AS currency, 'OUT' AS direction,
            CASE WHEN o.status = ${PAYOUT_STATUS.SUCCESSFUL} THEN 'SUCCEEDED' WHEN o.status IN (${PAYOUT_STATUS.PENDING}, ${PAYOUT_STATUS.JAMMED}) THEN 'PENDING' ELSE 'FAILED' END AS status,
            coalesce(o.transaction_time, o.created_at) AS at
       FROM payouts o
      WHERE o.destination_type ${destination}
        AND coalesce(o.transaction_time, o.created_at) >= $1 AND coalesce(o.transaction_time, o.created_at) < $2`;
}

interface MovementRow {
  kind: OurMovement['kind'];
  record_id: string;
  client_id: string;
  our_reference: string;
  operator_reference: string | null;
  counterparty: string | null;
  amount: string;
  currency: string;
  direction: 'IN' | 'OUT';
  status: MovementStatus;
  at: Date;
}

/** What we hold for a rail: charges, refunds, payouts and top-ups as OurMovement, read across clients. */
@Injectable()
export class OurMovementsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Every movement of the rail whose time falls in the period (the time money moved, else when it was asked for). */
  async load(rail: ReconciledRail, period: ReconciliationPeriod): Promise<OurMovement[]> {
    const rows: MovementRow[] = await this.db.query(`${SOURCES[rail].join('\nUNION ALL\n')} ORDER BY at, record_id`, [
      period.from,
      period.to,
    ]);
    return rows.map((row) => ({
      kind: row.kind,
      recordId: row.record_id,
      clientId: row.client_id,
      ourReference: row.our_reference,
      operatorReference: row.operator_reference,
      counterparty: row.counterparty,
      amount: new Decimal(row.amount),
      currency: row.currency.trim(),
      direction: row.direction,
      status: row.status,
      at: new Date(row.at),
    }));
  }

  /** Our movements of the rail in the currency that succeeded in the period, IN minus OUT (the balance roll-forward). */
  async netSucceeded(rail: ReconciledRail, currency: string, period: ReconciliationPeriod): Promise<Decimal> {
    return (await this.load(rail, period))
      .filter((movement) => movement.status === 'SUCCEEDED' && movement.currency === currency)
      .reduce((sum, movement) => (movement.direction === 'IN' ? sum.plus(movement.amount) : sum.minus(movement.amount)), new Decimal(0));
  }
}
