import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export type OperationKind = 'CREDIT' | 'DEBIT' | 'TRANSFER' | 'REVERSAL' | 'FUNDING';

export interface OperationRef {
  id: string;
  kind: OperationKind;
  request_fingerprint: string | null;
  entry_id: string;
}

/** The business record that owns each wallet journal entry, and the idempotency key of merchant requests. */
@Injectable()
export class WalletOperations {
  async findByReference(manager: EntityManager, clientId: string, sourceTransactionId: string): Promise<OperationRef | null> {
    const [row] = await manager.query(
      `SELECT id, kind, request_fingerprint, entry_id FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = $2`,
      [clientId, sourceTransactionId],
    );
    return row ?? null;
  }

  /**
   * Records the operation. Returns null when another request with the same reference committed first: the
   * unique index makes a concurrent duplicate wait for the first and then insert nothing.
   */
  async record(
    manager: EntityManager,
    op: { clientId: string; kind: OperationKind; sourceTransactionId: string | null; fingerprint: string | null; entryId: string; reversesOperationId?: string },
  ): Promise<string | null> {
    const [row] = await manager.query(
      `INSERT INTO wallet_operations (client_id, kind, source_transaction_id, request_fingerprint, entry_id, reverses_operation_id)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (client_id, source_transaction_id) WHERE source_transaction_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [op.clientId, op.kind, op.sourceTransactionId, op.fingerprint, op.entryId, op.reversesOperationId ?? null],
    );
    return row?.id ?? null;
  }
}
