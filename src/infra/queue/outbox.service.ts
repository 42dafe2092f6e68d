import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Topic } from './queues';

/**
 * Follow-up work is written to the outbox inside the transaction of the state change it follows, so it exists
 * exactly when the change does. Payloads carry ids only; workers reload the state.
 */
@Injectable()
export class OutboxService {
  async enqueue(manager: EntityManager, topic: Topic, payload: Record<string, string>, availableAt?: Date): Promise<void> {
    await manager.query(`INSERT INTO outbox (topic, payload, available_at) VALUES ($1, $2, coalesce($3, now()))`, [
      topic,
      payload,
      availableAt ?? null,
    ]);
  }

  /** Many jobs of one topic in one statement (a bulk request's jobs), all due at the same time. */
  async enqueueMany(manager: EntityManager, topic: Topic, payloads: Array<Record<string, string>>, availableAt?: Date): Promise<void> {
    if (payloads.length === 0) return;
    await manager.query(
      `INSERT INTO outbox (topic, payload, available_at) SELECT $1, p, coalesce($3, now()) FROM unnest($2::jsonb[]) AS p`,
      [topic, payloads.map((p) => JSON.stringify(p)), availableAt ?? null],
    );
  }
}
