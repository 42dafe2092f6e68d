import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { countRows, Keyset, ListCount, ListFilter, ListQuery, listRows, ListSource } from '../../common/listing';
import { PreparedStatement, runPrepared } from '../../infra/database/prepared';
import type { CallbackKind } from '../../clients/callback-settings.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A delivery's attempts as one JSON array (`d` the delivery), with each one's response body when `answers`; times as
 * the API prints every other one (ISO 8601, UTC, milliseconds, `Z`).
 */
const attemptLog = (answers = false) => `coalesce((SELECT json_agg(json_build_object('attempt', a.attempt,
    'attempted_at', to_char(a.attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'http_status', a.http_status, 'latency_ms', a.latency_ms, 'error', a.error, 'replay', a.replay${answers ? ", 'response_body', a.response_body" : ''})
    ORDER BY a.attempt)
  FROM callback_attempts a WHERE a.client_id = d.client_id AND a.delivery_id = d.id), '[]') AS attempt_log`;
const ATTEMPT_LOG = attemptLog();

/** The portal's list of deliveries, each with its attempts. */
const LIST: ListSource = {
  select: `d.id, d.created_at::text AS position_at, d.kind, d.event, d.reference, d.url, d.status, d.attempts, d.next_attempt_at,
    d.replay_requested_at, d.created_at, ${ATTEMPT_LOG}`,
  from: 'callback_deliveries d WHERE d.client_id = $1',
  columns: { createdAt: 'd.created_at', id: 'd.id', idType: 'uuid', status: 'd.status', reference: 'd.reference' },
};

export interface CallbackAttempt {
  attempt: number;
  attempted_at: string;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** A re-send the merchant asked for (replay API, portal's Resend), outside the retry schedule. */
  replay: boolean;
}

/** A delivery as the portal shows it, with every attempt. */
export interface DeliveryView {
  id: string;
  position_at: string;
  kind: CallbackKind;
  event: string;
  reference: string;
  url: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  next_attempt_at: Date;
  replay_requested_at: Date | null;
  created_at: Date;
  attempt_log: CallbackAttempt[];
}

/** An attempt as the delivery's page shows it: with what the receiver answered. */
export interface AnsweredAttempt extends CallbackAttempt {
  /** The start of the receiver's response body (up to RESPONSE_BODY_CHARS characters); null when there was no answer. */
  response_body: string | null;
}

/** One delivery with the body it sends (the request, frozen when it was scheduled) and every attempt's answer. */
export interface DeliveryDetail extends Omit<DeliveryView, 'attempt_log'> {
  payload: Record<string, unknown>;
  attempt_log: AnsweredAttempt[];
}

/** How much of a receiver's response body an attempt keeps. */
export const RESPONSE_BODY_CHARS = 2000;

export interface CallbackEvent {
  clientId: string;
  /** Whose callback settings apply: their Basic-auth credentials go with it to their URL's origin only. */
  kind: CallbackKind;
  /** successful_payment, failed_payment, checkout_completed, reversal_result, … */
  event: string;
  /** The merchant's reference the event is about (external_reference, merchant_transaction_id, …). */
  reference: string;
  /** The URLs the request named (none when only the client's endpoint is told). */
  urls: string[];
  /** Also to the client's own endpoint for this kind, when it has set one. */
  toClientEndpoint?: boolean;
  payload: Record<string, unknown>;
}

const SCHEDULE: PreparedStatement = {
  name: 'callback_schedule',
  text: `SELECT count(callback_schedule(p_client_id => e.client_id, p_kind => e.kind, p_event => e.event, p_reference => e.reference,
      p_urls => e.urls, p_to_endpoint => e.to_endpoint, p_payload => e.payload))
    FROM jsonb_to_recordset($1::jsonb)
      AS e(client_id uuid, kind text, event text, reference text, urls text[], to_endpoint boolean, payload jsonb)`,
};

/** Schedules callbacks and shows merchants their delivery log. */
/** The channel callback_schedule (its SQL names it) and a replay request notify at their commit: CallbackRelay listens. */
export const CALLBACKS_CHANNEL = 'callbacks';

@Injectable()
export class CallbacksService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * callback_schedule (src/callbacks/delivery/sql/callback_schedule.sql), the one writer of deliveries, also for the SQL that
   * announces: one delivery per distinct URL, written in the caller's transaction with the state change it reports, due
   * now (the delivery row is its own outbox: the worker's relay hands it to BullMQ); the payload is frozen now, so every
   * retry sends the same bytes under the same X-Event-Id. Any number of events in one statement.
   */
  async schedule(manager: EntityManager, ...events: CallbackEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map((e) => ({
      client_id: e.clientId,
      kind: e.kind,
      event: e.event,
      reference: e.reference,
      urls: e.urls,
      to_endpoint: e.toClientEndpoint ?? false,
      payload: e.payload,
    }));
    await runPrepared(manager, SCHEDULE, [JSON.stringify(rows)]);
  }

  async log(clientId: string, reference: string) {
    const deliveries = await this.db.query(
      `SELECT d.id, d.event, d.reference, d.url, d.status, d.attempts, d.next_attempt_at, d.acknowledgement, d.created_at, d.completed_at,
         ${ATTEMPT_LOG}
       FROM callback_deliveries d WHERE d.client_id = $1 AND d.reference = $2 ORDER BY d.created_at, d.id`,
      [clientId, reference],
    );
    return {
      reference,
      deliveries: deliveries.map((d: Record<string, unknown>) => ({
        event_id: d.id,
        event: d.event,
        url: d.url,
        status: d.status,
        attempts: d.attempts,
        next_attempt_at: d.status === 'PENDING' ? d.next_attempt_at : null,
        acknowledgement: d.acknowledgement,
        created_at: d.created_at,
        completed_at: d.completed_at,
        attempt_log: d.attempt_log,
      })),
    };
  }

  /** The client's deliveries, newest first, filtered and keyset-paged, each with its attempts (the portal). */
  deliveries(db: DataSource, clientId: string, query: ListQuery): Promise<DeliveryView[]> {
    return listRows(db, clientId, query, LIST);
  }

  /** How many of the client's deliveries the filter matches, and how many are newer than `first`. */
  countDeliveries(db: DataSource, clientId: string, filter: ListFilter, first: Keyset | null): Promise<ListCount> {
    return countRows(db, clientId, filter, LIST, first);
  }

  /** One of the client's deliveries with its body and every attempt's answer; null when the client has none with this id. */
  async delivery(clientId: string, eventId: string): Promise<DeliveryDetail | null> {
    if (!UUID.test(eventId)) return null;
    const [row] = await this.db.query(
      `SELECT d.id, d.created_at::text AS position_at, d.kind, d.event, d.reference, d.url, d.status, d.attempts, d.next_attempt_at,
         d.replay_requested_at, d.created_at, d.payload, ${attemptLog(true)}
       FROM callback_deliveries d WHERE d.client_id = $1 AND d.id = $2`,
      [clientId, eventId],
    );
    return row ?? null;
  }

  /**
   * Sends one of the client's callbacks again (replay API, portal's Resend): the same event id and frozen body, to
   * the URL stored with the delivery (never one given now), newly signed when the worker sends it, recorded as an
   * attempt of that delivery marked as a replay. The request itself is what the relay hands to BullMQ (woken by the
   * NOTIFY); until that attempt is recorded, asking again changes nothing (a double click sends one callback). Null
   * when the client has no such delivery.
   */
  async replay(clientId: string, eventId: string): Promise<{ event_id: string; replay_requested_at: Date } | null> {
    if (!UUID.test(eventId)) return null;
    // least(…, now()) keeps the first request's time; not coalesce: Citus refuses a clock inside it in an UPDATE. A
    // request while one waits leaves the hand-over alone: handing the row over again would let a job that has read
    // the replay still asked for, and the later one, both send it.
    const [[requested]]: [{ replay_requested_at: Date }[], number] = await this.db.query(
      `UPDATE callback_deliveries SET replay_requested_at = least(replay_requested_at, now()),
         relayed_at = CASE WHEN replay_requested_at IS NULL THEN NULL ELSE relayed_at END
       WHERE id = $1 AND client_id = $2 RETURNING replay_requested_at`,
      [eventId, clientId],
    );
    if (requested) await this.db.query(`SELECT pg_notify($1, '')`, [CALLBACKS_CHANNEL]);
    return requested ? { event_id: eventId, replay_requested_at: requested.replay_requested_at } : null;
  }
}
