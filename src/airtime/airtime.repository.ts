import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import { PAYING_STATES, type PayingServiceOutcome } from '../float/paying-service';
import { BatchedCall } from '../infra/database/batched-call';
import { PreparedStatement } from '../infra/database/prepared';
import { TOPICS } from '../infra/queue/queues';
import { AWAITING_PROVIDER, FINAL_STATUSES, RecipientRow } from './airtime';

/** A bulk airtime request as acceptance takes it: the paying service by code, or null for the client's default. */
export interface AirtimeToAccept {
  clientId: string;
  reference: string;
  serviceCode: string | null;
  recipients: Array<{ phoneNumber: string; amount: Decimal }>;
  /** The message recipients start with (600). */
  message: string;
  /** One processing job per this many positions, due at processAt. */
  recipientsPerJob: number;
  processAt: Date;
}

/** What acceptance found (SQL function airtime_accept); only ACCEPTED stored anything. */
export interface AirtimeAcceptance {
  outcome: 'ACCEPTED' | 'DUPLICATE' | 'NO_DEFAULT_SERVICE' | 'AMOUNT_OUT_OF_BOUNDS' | 'INSUFFICIENT_FLOAT' | PayingServiceOutcome;
  /** The paying service's code (the default airtime service's when the request named none), once known. */
  service_code: string | null;
  /** The first recipient (from 0) whose amount is outside the service's bounds. */
  recipient_index: number | null;
  minimum_amount: string | null;
  maximum_amount: string | null;
}

/** airtime_accept's batch form (group commit). */
const ACCEPT_AIRTIME: PreparedStatement = { name: 'airtime_accept_batch', text: 'SELECT * FROM airtime_accept_batch($1)' };

const SELECT_RECIPIENT = `
  SELECT r.id, r.request_id, q.client_id, q.reference, q.currency, r.position, r.phone_number, r.amount, r.fee, r.hold_id,
    h.float_account_id, r.correlation_id, r.service_status, r.provider_reference, r.message
  FROM airtime_recipients r
  JOIN airtime_requests q ON q.id = r.request_id
  JOIN float_holds h ON h.id = r.hold_id`;

/** The SQL of the airtime tables. */
@Injectable()
export class AirtimeRepository {
  private readonly acceptance: BatchedCall<AirtimeAcceptance>;

  constructor(@InjectDataSource() db: DataSource) {
    this.acceptance = new BatchedCall(db, ACCEPT_AIRTIME);
  }

  /**
   * Accepts a request in one call: a reference already taken, the paying service and each amount's bounds are checked
   * first; then the reference is claimed (a concurrent duplicate waits on the unique key and answers DUPLICATE), the
   * total is reserved in one entry with one hold per recipient, and the request, its recipients (positions 1..n) and
   * its processing jobs are written, committed together or not at all. The call is shared with the requests accepted
   * at the same moment (group commit), which lock the float once between them.
   */
  accept(r: AirtimeToAccept): Promise<AirtimeAcceptance> {
    return this.acceptance.call([
      r.clientId,
      r.reference,
      r.serviceCode,
      r.recipients.map((x) => x.phoneNumber),
      r.recipients.map((x) => x.amount.toFixed()),
      r.message,
      TOPICS.processAirtime,
      r.recipientsPerJob,
      r.processAt,
      PAYING_STATES,
    ]);
  }

  /** The recipients of the caller's request in request order, or null when the caller has no such request. */
  async results(manager: EntityManager, clientId: string, reference: string): Promise<RecipientRow[] | null> {
    const rows: RecipientRow[] = await manager.query(
      `${SELECT_RECIPIENT} WHERE q.client_id = $1 AND q.reference = $2 ORDER BY r.position`,
      [clientId, reference],
    );
    return rows.length > 0 ? rows : null;
  }

  /** Recipients of a slice of a request that still await the provider (read without locks, to ask the provider). */
  async awaitingProvider(manager: EntityManager, requestId: string, first: number, last: number): Promise<RecipientRow[]> {
    return manager.query(
      `${SELECT_RECIPIENT} WHERE r.request_id = $1 AND r.position BETWEEN $2 AND $3 AND r.service_status = ANY($4) ORDER BY r.id`,
      [requestId, first, last, AWAITING_PROVIDER],
    );
  }

  /** The given recipients that are not final yet (read without locks, to ask the provider). */
  async unresolved(manager: EntityManager, ids: string[]): Promise<RecipientRow[]> {
    return manager.query(`${SELECT_RECIPIENT} WHERE r.id = ANY($1) AND r.service_status <> ALL($2) ORDER BY r.id`, [ids, FINAL_STATUSES]);
  }

  /**
   * The given recipients that are not final yet, with their holds, under row locks taken in id order (the business
   * row before its hold, as FloatHoldsService expects).
   */
  async lockUnresolved(manager: EntityManager, ids: string[]): Promise<RecipientRow[]> {
    return manager.query(`${SELECT_RECIPIENT} WHERE r.id = ANY($1) AND r.service_status <> ALL($2) ORDER BY r.id FOR UPDATE OF r, h`, [
      ids,
      FINAL_STATUSES,
    ]);
  }

  /**
   * Records where recipients now stand after the provider was asked, in one statement; final statuses are dated
   * (resolved_at).
   */
  async setStatuses(manager: EntityManager, recipients: RecipientRow[]): Promise<void> {
    if (recipients.length === 0) return;
    await manager.query(
      `UPDATE airtime_recipients r SET service_status = c.status, message = c.message, provider_reference = c.provider_reference,
         resolved_at = CASE WHEN c.status = ANY($5) THEN now() END, checked_at = now(), updated_at = now()
       FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::text[]) AS c(id, status, message, provider_reference)
       WHERE r.id = c.id`,
      [
        recipients.map((r) => r.id),
        recipients.map((r) => r.service_status),
        recipients.map((r) => r.message),
        recipients.map((r) => r.provider_reference),
        FINAL_STATUSES,
      ],
    );
  }

  /**
   * Claims up to `limit` recipients left processing (601) or jammed (604) whose provider was last asked before
   * `checkedBefore`, oldest first, by stamping them as asked now: concurrent workers claim disjoint batches (SKIP LOCKED).
   */
  async claimForRecheck(manager: EntityManager, checkedBefore: Date, limit: number): Promise<string[]> {
    // An UPDATE answers [rows, count] through TypeORM. The statuses are written out so that the partial index serves.
    const [rows]: [Array<{ id: string }>, number] = await manager.query(
      `UPDATE airtime_recipients SET checked_at = now() WHERE id IN (
         SELECT id FROM airtime_recipients WHERE service_status IN (601, 604) AND checked_at < $1 ORDER BY checked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [checkedBefore, limit],
    );
    return rows.map((r) => String(r.id));
  }
}
