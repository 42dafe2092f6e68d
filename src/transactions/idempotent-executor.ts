import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isRetryableTransactionError, isUniqueViolation } from '../infra/database/pg-errors';
import { FloorBreachError } from '../ledger/ledger.errors';
import { MoneyRefusals } from './money-refusals';
import { Leg, TransactionRecords, TransactionRow } from './transaction-records';
import { OperationKind, WalletOperations } from './wallet-operations';

const MAX_ATTEMPTS = 3;

export interface OperationRequest {
  clientId: string;
  /** The merchant's source_transaction_id; null for operations without one (fundings, unreferenced reversals). */
  reference: string | null;
  kind: OperationKind;
  fingerprint: string;
}

/**
 * Records the operation that owns an entry together with its legs, and returns them as records; throws when a
 * duplicate of this request committed first.
 */
export type RecordOperation = (entryId: string, legs: Leg[]) => Promise<TransactionRow[]>;

class DuplicateReference extends Error {}

/**
 * Runs a money operation exactly once per merchant reference. A replay is answered from the stored records
 * before any balance is looked at; a concurrent duplicate waits on the reference's unique index and is then
 * answered the same way; a reused reference with another body is a 409. Deadlocks and serialization failures are
 * retried here and never reach the merchant.
 */
@Injectable()
export class IdempotentExecutor {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly operations: WalletOperations,
    private readonly records: TransactionRecords,
  ) {}

  async run<T>(
    request: OperationRequest,
    work: (manager: EntityManager, record: RecordOperation) => Promise<TransactionRow[]>,
    present: (rows: TransactionRow[]) => T,
  ): Promise<T> {
    const replay = await this.replay(request, present);
    if (replay) return replay;
    for (let attempt = 1; ; attempt++) {
      try {
        return present(await this.db.transaction((manager) => work(manager, this.recorder(manager, request))));
      } catch (error) {
        // A duplicate that lost the race may have failed on the balance its twin just spent: answer it as a replay.
        if (error instanceof DuplicateReference || error instanceof FloorBreachError || isUniqueViolation(error)) {
          const late = await this.replay(request, present);
          if (late) return late;
        }
        if (isRetryableTransactionError(error) && attempt < MAX_ATTEMPTS) continue;
        if (error instanceof FloorBreachError) throw MoneyRefusals.insufficientBalance(error.accountNumber);
        throw error;
      }
    }
  }

  private recorder(manager: EntityManager, request: OperationRequest): RecordOperation {
    return async (entryId, legs) => {
      const rows = await this.records.recordOperation(
        manager,
        {
          clientId: request.clientId,
          kind: request.kind,
          sourceTransactionId: request.reference,
          fingerprint: request.fingerprint,
          entryId,
        },
        legs,
      );
      if (!rows) throw new DuplicateReference();
      return rows;
    };
  }

  private async replay<T>(request: OperationRequest, present: (rows: TransactionRow[]) => T): Promise<T | null> {
    if (!request.reference) return null;
    const existing = await this.operations.findByReference(this.db.manager, request.clientId, request.reference);
    if (!existing) return null;
    if (existing.kind !== request.kind || existing.request_fingerprint !== request.fingerprint) {
      throw MoneyRefusals.referenceReused();
    }
    return present(await this.records.ofOperation(this.db.manager, existing.id));
  }
}
