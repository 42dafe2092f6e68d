import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { requestFingerprint } from '../common/fingerprint';
import { UUID } from '../common/validation/validators';
import { isRetryableTransactionError, isUniqueViolation } from '../common/errors/pg-errors';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { FloorBreachError } from '../ledger/ledger.errors';
import { ledgerError } from '../ledger/ledger.service';
import { MoneyRefusals } from './money-refusals';
import { ReversalDto } from './transaction.dto';
import { pairRecord, TransactionRow } from './transaction-records';

/** A reversal request, as SQL function wallet_reverse takes it. */
export interface WalletReversal {
  clientId: string;
  /** null when the path's id is not a UUID: no transaction has it. */
  transactionId: string | null;
  reference: string | null;
  fingerprint: string;
  narration: string | null;
}

export type WalletReverseOutcome = 'REVERSED' | 'REPLAY' | 'REFERENCE_REUSED' | 'NOT_FOUND' | 'REVERSAL_OF_REVERSAL' | 'ALREADY_REVERSED';

/** What wallet_reverse answers: the reversal's records for REVERSED and REPLAY, none for a refusal. */
export type WalletReverseAnswer = {
  [O in WalletReverseOutcome]: { outcome: O; records: O extends 'REVERSED' | 'REPLAY' ? TransactionRow[] : null };
}[WalletReverseOutcome];

const WALLET_REVERSE: PreparedStatement = {
  name: 'wallet_reverse',
  text: `SELECT outcome, records FROM wallet_reverse(p_client_id => $1, p_transaction_id => $2, p_reference => $3,
           p_fingerprint => $4, p_narration => $5)`,
};

/** SQL function wallet_reverse (src/transactions/sql/wallet_reverse.sql): one call, its own transaction. */
export async function walletReverse(db: DataSource, reversal: WalletReversal): Promise<WalletReverseAnswer> {
  const [answer] = await runPrepared<WalletReverseAnswer>(db, WALLET_REVERSE, [
    reversal.clientId,
    reversal.transactionId,
    reversal.reference,
    reversal.fingerprint,
    reversal.narration,
  ]);
  return answer;
}

/** SQLSTATE wallet_reverse raises for a CLOSED wallet, with the account number as detail. */
const WALLET_CLOSED = 'WC001';

const MAX_ATTEMPTS = 3;

/**
 * Reverses a credit, debit or transfer (provider contract §4): one entry that exactly undoes the original,
 * fee included, and a mirrored record per side. Once only; a reversal itself cannot be reversed. The whole
 * operation (replay check, lookups, posting, records) is one call to SQL function wallet_reverse.
 */
@Injectable()
export class WalletReversalsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async reverse(principal: WalletPrincipal, transactionId: string, dto: ReversalDto) {
    const answer = await this.call({
      clientId: principal.clientId,
      transactionId: UUID.test(transactionId) ? transactionId : null,
      reference: dto.source_transaction_id ?? null,
      fingerprint: requestFingerprint('REVERSAL', { transaction_id: transactionId, ...dto }),
      narration: dto.transaction_narration ?? null,
    });
    switch (answer.outcome) {
      case 'REVERSED':
      case 'REPLAY':
        return pairRecord(answer.records);
      case 'REFERENCE_REUSED':
        throw MoneyRefusals.referenceReused();
      case 'NOT_FOUND':
        throw new NotFoundException('Transaction not found');
      case 'REVERSAL_OF_REVERSAL':
        throw new BadRequestException('A reversal cannot be reversed');
      case 'ALREADY_REVERSED':
        throw alreadyReversed();
    }
  }

  /**
   * Calls wallet_reverse again after a deadlock or serialization failure, and once when a request with the same
   * reference may have committed meanwhile (the reference taken, or a floor breached by its twin's movement): that
   * call answers it as a replay or a reused reference.
   */
  private async call(reversal: WalletReversal): Promise<WalletReverseAnswer> {
    let twinChecked = reversal.reference === null;
    for (let attempt = 1; ; attempt++) {
      try {
        return await walletReverse(this.db, reversal);
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
