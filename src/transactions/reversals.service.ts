import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { Money } from '../common/money';
import { isUniqueViolation } from '../infra/database/pg-errors';
import { AccountMovement, LedgerService } from '../ledger/ledger.service';
import { IdempotentExecutor, type RecordOperation } from './idempotent-executor';
import { ReversalDto } from './transaction.dto';
import { Leg, pairRecord, TransactionRecords, TransactionRow } from './transaction-records';
import { requestFingerprint } from '../common/fingerprint';

const REVERSIBLE = ['CREDIT', 'DEBIT', 'TRANSFER', 'FUNDING'];

/**
 * Reverses a credit, debit or transfer (provider contract §4): one entry that exactly undoes the original,
 * fee included, and a mirrored record per side. Once only; a reversal itself cannot be reversed.
 */
@Injectable()
export class ReversalsService {
  constructor(
    private readonly executor: IdempotentExecutor,
    private readonly ledger: LedgerService,
    private readonly records: TransactionRecords,
  ) {}

  async reverse(principal: WalletPrincipal, transactionId: string, dto: ReversalDto) {
    const request = {
      clientId: principal.clientId,
      reference: dto.source_transaction_id ?? null,
      kind: 'REVERSAL' as const,
      fingerprint: requestFingerprint('REVERSAL', { transaction_id: transactionId, ...dto }),
    };
    try {
      return await this.executor.run(
        request,
        (manager, record) => this.reverseIn(manager, principal, transactionId, dto, record),
        pairRecord,
      );
    } catch (error) {
      // Two reversals of one transaction racing: the second meets the first on the unique reverses_operation_id.
      if (isUniqueViolation(error, 'wallet_operations_reverses_operation_id_key')) throw alreadyReversed();
      throw error;
    }
  }

  private async reverseIn(
    manager: EntityManager,
    principal: WalletPrincipal,
    transactionId: string,
    dto: ReversalDto,
    recordOperation: RecordOperation,
  ): Promise<TransactionRow[]> {
    const target = await this.records.byId(manager, principal.clientId, transactionId);
    if (!target) throw new NotFoundException('Transaction not found');
    if (target.operation_kind === 'REVERSAL') throw new BadRequestException('A reversal cannot be reversed');
    if (!REVERSIBLE.includes(target.operation_kind)) throw new BadRequestException('This transaction cannot be reversed');
    // Concurrent reversals of one transaction queue on the original's row: the one that waited then sees the
    // committed reversal below and answers 409, instead of posting first and failing on a balance already spent.
    await manager.query(`SELECT 1 FROM wallet_operations WHERE id = $1 FOR UPDATE`, [target.operation_id]);
    const [already] = await manager.query(`SELECT 1 FROM wallet_operations WHERE reverses_operation_id = $1`, [target.operation_id]);
    if (already) throw alreadyReversed();

    const [operation] = await manager.query(`SELECT entry_id FROM wallet_operations WHERE id = $1`, [target.operation_id]);
    const posted = await this.ledger.reverseEntry(manager, principal.clientId, operation.entry_id, 'WALLET_REVERSAL');
    const [closed] = await manager.query(
      `SELECT a.account_number FROM wallets w JOIN ledger_accounts a ON a.id = w.id WHERE w.id = ANY($1) AND w.status = 'CLOSED' LIMIT 1`,
      [[...posted.movements.keys()]],
    );
    if (closed) throw new BadRequestException(`Wallet ${closed.account_number} is CLOSED and cannot be reversed on`);
    const originals = await this.records.ofOperation(manager, target.operation_id);
    const legs = await this.mirroredLegs(manager, principal.clientId, originals, posted.movements, dto);
    return recordOperation(posted.entryId, legs, target.operation_id);
  }

  /**
   * One reversal record per original record, with the direction flipped. A single-wallet original had the
   * settlement account as its other side; the reversal shows that side as a record of its own.
   */
  private async mirroredLegs(
    manager: EntityManager,
    clientId: string,
    originals: TransactionRow[],
    movements: Map<string, AccountMovement>,
    dto: ReversalDto,
  ): Promise<Leg[]> {
    const ids = originals.map(() => randomUUID());
    const legs: Leg[] = originals.map((row, i) => ({
      id: ids[i],
      accountId: row.account_id,
      accountNumber: row.account_number,
      accountKind: row.account_kind,
      clientServiceId: null,
      clientServiceCode: null,
      type: row.transaction_type === 'CREDIT' ? 'DEBIT' : 'CREDIT',
      source: row.transaction_type === 'CREDIT' ? 'INTERNAL_REVERAL_DEBIT' : 'INTERNAL_REVERAL_CREDIT',
      currency: row.currency,
      amount: new Money(row.transaction_amount),
      fee: new Money(row.transaction_fee),
      movement: movements.get(row.account_id)!,
      otherPartyAccount: row.other_party_account,
      otherPartyTransactionHash: originals.length > 1 ? ids[1 - i] : null,
      sourceTransactionId: dto.source_transaction_id ?? null,
      sourceTransactionData: { reversed_transaction_id: row.id },
      narration: dto.transaction_narration ?? `Reversal of ${row.id}`,
      transactionDate: new Date(),
      original: row.original_currency
        ? { currency: row.original_currency, amount: new Money(row.original_amount!), exchangeRate: new Money(row.exchange_rate!) }
        : null,
    }));
    if (originals.length === 1) {
      const [walletLeg] = legs;
      const original = originals[0];
      const [settlement] = await manager.query(
        `SELECT id, currency, account_number, kind FROM ledger_accounts WHERE client_id = $1 AND account_number = $2`,
        [clientId, original.other_party_account],
      );
      const movement = movements.get(settlement.id)!;
      const settlementId = randomUUID();
      walletLeg.otherPartyTransactionHash = settlementId;
      legs.push({
        ...walletLeg,
        id: settlementId,
        accountId: settlement.id,
        accountNumber: settlement.account_number,
        accountKind: settlement.kind,
        type: walletLeg.type === 'CREDIT' ? 'DEBIT' : 'CREDIT',
        source: walletLeg.type === 'CREDIT' ? 'INTERNAL_REVERAL_DEBIT' : 'INTERNAL_REVERAL_CREDIT',
        currency: settlement.currency,
        amount: movement.amount.abs(),
        fee: new Money(0),
        movement,
        otherPartyAccount: original.account_number,
        otherPartyTransactionHash: walletLeg.id,
        original: null,
      });
    }
    return legs;
  }
}

function alreadyReversed(): ConflictException {
  return new ConflictException('Transaction already reversed');
}
