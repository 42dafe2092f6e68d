import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export type OperationKind = 'CREDIT' | 'DEBIT' | 'TRANSFER' | 'REVERSAL' | 'FUNDING';

export interface OperationRef {
  id: string;
  kind: OperationKind;
  request_fingerprint: string | null;
  entry_id: string;
}

/** Looks up wallet operations by the merchant's reference (their idempotency key). */
@Injectable()
export class WalletOperations {
  async findByReference(manager: EntityManager, clientId: string, sourceTransactionId: string): Promise<OperationRef | null> {
    const [row] = await manager.query(
      `SELECT id, kind, request_fingerprint, entry_id FROM wallet_operations WHERE client_id = $1 AND source_transaction_id = $2`,
      [clientId, sourceTransactionId],
    );
    return row ?? null;
  }
}
