import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import type { CallbackKind } from './callback-settings.service';

export interface CallbackEvent {
  clientId: string;
  /** Whose callback settings apply: their Basic-auth credentials go with it to their URL's origin only. */
  kind: CallbackKind;
  /** successful_payment, failed_payment, checkout_completed, reversal_result, … */
  event: string;
  /** The merchant's reference the event is about (external_reference, merchant_transaction_id, …). */
  reference: string;
  urls: string[];
  payload: Record<string, unknown>;
}

/** Schedules callbacks and shows merchants their delivery log. */
@Injectable()
export class CallbacksService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * One delivery per distinct URL, written in the caller's transaction with the state change it reports; the
   * payload is frozen now, so every retry sends the same bytes under the same X-Event-Id.
   */
  async schedule(manager: EntityManager, event: CallbackEvent): Promise<void> {
    for (const url of [...new Set(event.urls)]) {
      const [delivery] = await manager.query(
        `INSERT INTO callback_deliveries (client_id, kind, event, reference, url, payload) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [event.clientId, event.kind, event.event, event.reference, url, event.payload],
      );
      await this.outbox.enqueue(manager, TOPICS.deliverCallback, { deliveryId: delivery.id });
    }
  }

  async log(clientId: string, reference: string) {
    const deliveries = await this.db.query(
      `SELECT d.id, d.event, d.reference, d.url, d.status, d.attempts, d.next_attempt_at, d.acknowledgement, d.created_at, d.completed_at,
         coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'http_status', a.http_status,
                    'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                   FROM callback_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_log
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
}
