import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Topic } from './queues';

/**
 * Follow-up work is written to the outbox inside the transaction of the state change it follows, so it exists
 * exactly when the change does. Payloads carry ids only; workers reload the state.
 */
@Injectable()
export class OutboxService {
  /** `clientId`: the client of the record the work is about (its shard on Citus). */
  async enqueue(
    manager: EntityManager,
    clientId: string,
    topic: Topic,
    payload: Record<string, string>,
    availableAt?: Date,
  ): Promise<void> {
    await manager.query(`INSERT INTO outbox (client_id, topic, payload, available_at) VALUES ($1, $2, $3, coalesce($4, now()))`, [
      clientId,
      topic,
      payload,
      availableAt ?? null,
    ]);
  }
}
