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
}
