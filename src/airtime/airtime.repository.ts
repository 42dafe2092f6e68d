import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { EntityManager } from 'typeorm';
import { AWAITING_PROVIDER, FINAL_STATUSES, RecipientRow } from './airtime';

/** A recipient about to be recorded, with the hold that pays it. */
export interface NewRecipient {
  phoneNumber: string;
  amount: Decimal;
  fee: Decimal;
  holdId: string;
  message: string;
}

const SELECT_RECIPIENT = `
  SELECT r.id, r.request_id, q.client_id, q.reference, q.currency, r.position, r.phone_number, r.amount, r.fee, r.hold_id,
    h.float_account_id, r.correlation_id, r.service_status, r.provider_reference, r.message
  FROM airtime_recipients r
  JOIN airtime_requests q ON q.id = r.request_id
  JOIN float_holds h ON h.id = r.hold_id`;

/** The SQL of the airtime tables. */
@Injectable()
export class AirtimeRepository {
  async exists(manager: EntityManager, clientId: string, reference: string): Promise<boolean> {
    const rows = await manager.query(`SELECT 1 FROM airtime_requests WHERE client_id = $1 AND reference = $2`, [clientId, reference]);
    return rows.length > 0;
  }

  /**
   * Claims the reference. Returns null when a request with it committed first: the unique key makes a concurrent
   * duplicate wait for the first transaction, then insert nothing.
   */
  async claim(
    manager: EntityManager,
    r: { clientId: string; reference: string; clientServiceId: string; currency: string; recipientCount: number },
  ): Promise<string | null> {
    const [row] = await manager.query(
      `INSERT INTO airtime_requests (client_id, reference, client_service_id, currency, recipient_count) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (client_id, reference) DO NOTHING RETURNING id`,
      [r.clientId, r.reference, r.clientServiceId, r.currency, r.recipientCount],
    );
    return row ? String(row.id) : null;
  }

  /** Ties the request to its reservation and records its recipients (positions 1..n), in one statement. */
  async addRecipients(manager: EntityManager, requestId: string, reservationId: string, recipients: NewRecipient[]): Promise<void> {
    await manager.query(
      `WITH request AS (UPDATE airtime_requests SET reservation_id = $2 WHERE id = $1)
       INSERT INTO airtime_recipients (request_id, position, phone_number, amount, fee, hold_id, message)
       SELECT $1, r.n, r.phone_number, r.amount, r.fee, r.hold_id, r.message
       FROM unnest($3::text[], $4::numeric[], $5::numeric[], $6::bigint[], $7::text[]) WITH ORDINALITY AS r(phone_number, amount, fee, hold_id, message, n)`,
      [
        requestId,
        reservationId,
        recipients.map((r) => r.phoneNumber),
        recipients.map((r) => r.amount.toFixed()),
        recipients.map((r) => r.fee.toFixed()),
        recipients.map((r) => r.holdId),
        recipients.map((r) => r.message),
      ],
    );
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

  async defaultServiceCode(manager: EntityManager, clientId: string): Promise<string | null> {
    const [row] = await manager.query(
      `SELECT code FROM client_services WHERE client_id = $1 AND is_default_airtime ORDER BY created_at LIMIT 1`,
      [clientId],
    );
    return row?.code ?? null;
  }
}
