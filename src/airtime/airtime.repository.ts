import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import type { AmountBounds } from '../client-services/amount-bounds';
import type { InFlightRail } from '../float/float-holds.service';
import { PAYING_STATES, type PayingServiceOutcome } from '../float/paying-service';
import { BatchedCall } from '../infra/database/batched-call';
import { PreparedStatement } from '../infra/database/prepared';
import { TOPICS } from '../infra/queue/queues';
import { AWAITING_PROVIDER, FINAL_STATUSES, RecipientRow, SERVICE_STATUS } from './airtime';

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

/** One item of airtime_accept_batch: airtime_accept's arguments by name (without p_), amounts as JSON strings. */
interface AirtimeAcceptItem {
  reference: string;
  service_code: string | null;
  recipients: Array<{ phone_number: string; amount: string }>;
  message: string;
  rail: InFlightRail;
  topic: string;
  recipients_per_job: number;
  process_at: Date;
  paying_states: readonly string[];
}

/** Airtime is reserved into this in-flight account. */
const AIRTIME_IN_FLIGHT: InFlightRail = 'IN_FLIGHT_AIRTIME';

/**
 * airtime_accept's answer: its outcome, and in `detail` what the wording of a refusal needs (amounts as Postgres
 * prints them). Only ACCEPTED stored anything; the paying service's refusals are paying_service's, about the service
 * named or else the client's default airtime service. The SQL writes exactly these outcomes
 * (test/disbursements/acceptance-outcomes.spec.ts).
 */
export type AirtimeAcceptance =
  | { outcome: 'ACCEPTED'; detail: null }
  | { outcome: 'DUPLICATE'; detail: null }
  | { outcome: 'NO_DEFAULT_SERVICE'; detail: null }
  | { outcome: PayingServiceOutcome; detail: { service_code: string } }
  | { outcome: 'AMOUNT_BOUNDS'; detail: AmountBounds & { recipient_index: number } }
  | { outcome: 'INSUFFICIENT_FLOAT'; detail: null };

const ACCEPT_AIRTIME: PreparedStatement = { name: 'airtime_accept_batch', text: 'SELECT * FROM airtime_accept_batch($1, $2)' };

/** Positions first..last of a request's recipients: what one processing row of the outbox names. */
export interface AirtimeSlice {
  requestId: string;
  first: number;
  last: number;
}

const SELECT_RECIPIENT = `
  SELECT r.id, r.request_id, q.client_id, q.reference, q.currency, r.position, r.phone_number, r.amount, r.fee, r.hold_id,
    h.float_account_id, r.correlation_id, r.service_status, r.provider_reference, r.message
  FROM airtime_recipients r
  JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id
  JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id`;

/**
 * The client service that pays a request naming `serviceCode`: that one, else the client's default airtime service;
 * null when it names none and there is no default. SQL: src/airtime/sql/airtime_service_code.sql.
 */
export async function airtimeServiceCode(
  db: DataSource | EntityManager,
  clientId: string,
  serviceCode: string | null,
): Promise<string | null> {
  const [row] = await db.query(`SELECT airtime_service_code(p_client_id => $1, p_service_code => $2) AS code`, [clientId, serviceCode]);
  return row.code;
}

/** The created_at of the request of the oldest top-up still waiting for the provider's final answer (not final yet). */
export const OLDEST_UNRESOLVED_TOP_UP_SQL = `SELECT min(q.created_at) FROM airtime_recipients r
  JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id
  WHERE r.service_status IN (${SERVICE_STATUS.UNPROCESSED}, ${SERVICE_STATUS.PROCESSING}, ${SERVICE_STATUS.JAMMED})`;

/** The SQL of the airtime tables. */
@Injectable()
export class AirtimeRepository {
  private readonly acceptance: BatchedCall<AirtimeAcceptance, AirtimeAcceptItem>;

  constructor(@InjectDataSource() db: DataSource) {
    this.acceptance = new BatchedCall(db, ACCEPT_AIRTIME);
  }

  /**
   * Accepts a request in one call: a reference already taken, the paying service and each amount's bounds are checked
   * first; then the reference is claimed (a concurrent duplicate waits on the unique key and answers DUPLICATE), the
   * total is reserved in one entry with one hold per recipient, and the request, its recipients (positions 1..n) and
   * its processing jobs are written, committed together or not at all. The call is shared with the requests accepted
   * at the same moment (group commit), which lock the float once between them.
   * SQL: src/airtime/sql/airtime_accept_batch.sql (airtime_accept.sql per item).
   */
  accept(r: AirtimeToAccept): Promise<AirtimeAcceptance> {
    return this.acceptance.call(r.clientId, {
      reference: r.reference,
      service_code: r.serviceCode,
      recipients: r.recipients.map((x) => ({ phone_number: x.phoneNumber, amount: x.amount.toFixed() })),
      message: r.message,
      rail: AIRTIME_IN_FLIGHT,
      topic: TOPICS.processAirtime,
      recipients_per_job: r.recipientsPerJob,
      process_at: r.processAt,
      paying_states: PAYING_STATES,
    });
  }

  /** The recipients of the caller's request in request order, or null when the caller has no such request. */
  async results(manager: EntityManager, clientId: string, reference: string): Promise<RecipientRow[] | null> {
    const rows: RecipientRow[] = await manager.query(
      `${SELECT_RECIPIENT} WHERE q.client_id = $1 AND q.reference = $2 ORDER BY r.position`,
      [clientId, reference],
    );
    return rows.length > 0 ? rows : null;
  }

  /**
   * The client's recipients of slices of its requests that still await the provider, in one query (read without
   * locks, to ask the provider).
   */
  async awaitingProvider(manager: EntityManager, clientId: string, slices: AirtimeSlice[]): Promise<RecipientRow[]> {
    return manager.query(
      `${SELECT_RECIPIENT}
       JOIN unnest($1::bigint[], $2::int[], $3::int[]) s(request_id, first, last)
         ON r.request_id = s.request_id AND r.position BETWEEN s.first AND s.last
       WHERE r.client_id = $5 AND r.service_status = ANY($4) ORDER BY r.id`,
      [slices.map((s) => s.requestId), slices.map((s) => s.first), slices.map((s) => s.last), AWAITING_PROVIDER, clientId],
    );
  }

  /** The given recipients that are not final yet (read without locks, to ask the provider). */
  async unresolved(manager: EntityManager, ids: string[]): Promise<RecipientRow[]> {
    return manager.query(`${SELECT_RECIPIENT} WHERE r.id = ANY($1) AND r.service_status <> ALL($2) ORDER BY r.id`, [ids, FINAL_STATUSES]);
  }

  /**
   * The client's given recipients that are not final yet, with their holds, under row locks taken in id order (the
   * business row before its hold, as FloatHoldsService expects).
   */
  async lockUnresolved(manager: EntityManager, clientId: string, ids: string[]): Promise<RecipientRow[]> {
    return manager.query(
      `${SELECT_RECIPIENT} WHERE r.client_id = $3 AND r.id = ANY($1) AND r.service_status <> ALL($2) ORDER BY r.id FOR UPDATE OF r, h`,
      [ids, FINAL_STATUSES, clientId],
    );
  }

  /**
   * Records where recipients now stand after the provider was asked, in one statement; final statuses are dated
   * (resolved_at). The recipients are one client's.
   */
  async setStatuses(manager: EntityManager, clientId: string, recipients: RecipientRow[]): Promise<void> {
    if (recipients.length === 0) return;
    await manager.query(
      `UPDATE airtime_recipients r SET service_status = c.status, message = c.message, provider_reference = c.provider_reference,
         resolved_at = CASE WHEN c.status = ANY($5) THEN clock.at END, checked_at = now(), updated_at = now()
       FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::text[]) AS c(id, status, message, provider_reference),
         (SELECT now() AS at) clock -- outside the CASE: Citus refuses a clock inside CASE or COALESCE in an UPDATE
       WHERE r.client_id = $6 AND r.id = c.id`,
      [
        recipients.map((r) => r.id),
        recipients.map((r) => r.service_status),
        recipients.map((r) => r.message),
        recipients.map((r) => r.provider_reference),
        FINAL_STATUSES,
        clientId,
      ],
    );
  }

  /** When the provider was last asked about the recipient left processing or jammed asked longest ago; null when none. */
  async oldestChecked(manager: EntityManager): Promise<Date | null> {
    const [row] = await manager.query(
      `SELECT min(checked_at) AS at FROM airtime_recipients WHERE service_status IN (${SERVICE_STATUS.PROCESSING}, ${SERVICE_STATUS.JAMMED})`,
    );
    return row?.at ? new Date(row.at) : null;
  }

  /** The clients with recipients left processing or jammed whose provider was last asked before `checkedBefore` (a plain read). */
  async clientsToRecheck(manager: EntityManager, checkedBefore: Date): Promise<string[]> {
    const rows: Array<{ client_id: string }> = await manager.query(
      `SELECT DISTINCT client_id FROM airtime_recipients
       WHERE service_status IN (${SERVICE_STATUS.PROCESSING}, ${SERVICE_STATUS.JAMMED}) AND checked_at < $1`,
      [checkedBefore],
    );
    return rows.map((r) => r.client_id);
  }

  /**
   * Claims up to `limit` of the client's recipients left processing (601) or jammed (604) whose provider was last
   * asked before `checkedBefore`, oldest first, by stamping them as asked now: concurrent workers claim disjoint
   * batches (SKIP LOCKED).
   */
  async claimForRecheck(manager: EntityManager, clientId: string, checkedBefore: Date, limit: number): Promise<string[]> {
    // An UPDATE answers [rows, count] through TypeORM. The statuses are written out so that the partial index serves.
    const [rows]: [Array<{ id: string }>, number] = await manager.query(
      `UPDATE airtime_recipients SET checked_at = now() WHERE client_id = $3 AND id IN (
         SELECT id FROM airtime_recipients
         WHERE client_id = $3 AND service_status IN (${SERVICE_STATUS.PROCESSING}, ${SERVICE_STATUS.JAMMED})
         AND checked_at < $1 ORDER BY checked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [checkedBefore, limit, clientId],
    );
    return rows.map((r) => String(r.id));
  }
}
