import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { requestFingerprint } from '../common/fingerprint';
import { UUID } from '../common/validation/validators';
import { isRetryableTransactionError, isUniqueViolation } from '../infra/database/pg-errors';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { FloorBreachError } from '../ledger/ledger.errors';
import { ledgerError } from '../ledger/ledger.service';
import { MoneyRefusals } from './money-refusals';
import { ReversalDto } from './transaction.dto';
import { pairRecord, TransactionRow } from './transaction-records';

const MAX_ATTEMPTS = 3;

const REVERSE: PreparedStatement = { name: 'wallet_reverse', text: 'SELECT * FROM wallet_reverse($1, $2, $3, $4, $5)' };

/** What SQL function wallet_reverse answers: records for REVERSED and REPLAY, one row with the outcome otherwise. */
type ReversalRow = TransactionRow & {
  outcome: 'REVERSED' | 'REPLAY' | 'REFERENCE_REUSED' | 'NOT_FOUND' | 'REVERSAL_OF_REVERSAL' | 'NOT_REVERSIBLE' | 'ALREADY_REVERSED';
};

/** SQLSTATE wallet_reverse raises for a CLOSED wallet, with the account number as detail. */
const WALLET_CLOSED = 'WC001';

/**
 * Reverses a credit, debit or transfer (provider contract §4): one entry that exactly undoes the original,
 * fee included, and a mirrored record per side. Once only; a reversal itself cannot be reversed. The whole
 * operation (replay check, lookups, posting, records) is one call to SQL function wallet_reverse.
 */
@Injectable()
export class ReversalsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async reverse(principal: WalletPrincipal, transactionId: string, dto: ReversalDto) {
    const reference = dto.source_transaction_id ?? null;
    const values = [
      principal.clientId,
      UUID.test(transactionId) ? transactionId : null,
      reference,
      requestFingerprint('REVERSAL', { transaction_id: transactionId, ...dto }),
      dto.transaction_narration ?? null,
    ];
    const rows = await this.call(values, reference !== null);
    switch (rows[0].outcome) {
      case 'REVERSED':
      case 'REPLAY':
        return pairRecord(rows);
      case 'REFERENCE_REUSED':
        throw MoneyRefusals.referenceReused();
      case 'NOT_FOUND':
        throw new NotFoundException('Transaction not found');
      case 'REVERSAL_OF_REVERSAL':
        throw new BadRequestException('A reversal cannot be reversed');
      case 'NOT_REVERSIBLE':
        throw new BadRequestException('This transaction cannot be reversed');
      case 'ALREADY_REVERSED':
        throw alreadyReversed();
    }
  }

  /**
   * Calls wallet_reverse again after a deadlock or serialization failure, and once when a request with the same
   * reference may have committed meanwhile (the reference taken, or a floor breached by its twin's movement): that
   * call answers it as a replay or a reused reference.
   */
  private async call(values: unknown[], hasReference: boolean): Promise<ReversalRow[]> {
    let twinChecked = !hasReference;
    for (let attempt = 1; ; attempt++) {
      try {
        return await runPrepared<ReversalRow>(this.db, REVERSE, values);
      } catch (error) {
        const failure = ledgerError(error);
        if (!twinChecked && (isUniqueViolation(error, 'wallet_operations_source_uq') || failure instanceof FloorBreachError)) {
          twinChecked = true;
          continue;
        }
        if (isRetryableTransactionError(error) && attempt < MAX_ATTEMPTS) continue;
        if (failure instanceof FloorBreachError) throw MoneyRefusals.insufficientBalance(failure.accountNumber);
        if (isUniqueViolation(error, 'wallet_operations_reverses_operation_id_key')) throw alreadyReversed();
        const e = error as { code?: string; detail?: string };
        if (e.code === WALLET_CLOSED) throw new BadRequestException(`Wallet ${e.detail} is CLOSED and cannot be reversed on`);
        throw error;
      }
    }
  }
}

function alreadyReversed(): ConflictException {
  return new ConflictException('Transaction already reversed');
}
