import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { types } from 'pg';
import { DataSource } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { requestFingerprint } from '../common/fingerprint';
import { Money } from '../common/money';
import { isRetryableTransactionError } from '../infra/database/pg-errors';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { FloorBreachError } from '../ledger/ledger.errors';
import { ledgerError } from '../ledger/ledger.service';
import { statesThatMay, type MoneyRole } from '../wallets/wallet-state-machine';
import { MoneyRefusals } from './money-refusals';
import { CreditDebitDto, MoneyCommand, TransferDto } from './transaction.dto';
import { pairRecord, TransactionRow, transactionRecord } from './transaction-records';
import { WalletMoneyBatch, WalletMoneyRequest, WalletMoneyResult } from './wallet-money-batch';

const WALLET_FUND: PreparedStatement = { name: 'wallet_fund', text: 'SELECT * FROM wallet_fund($1, $2, $3, $4, $5, $6, $7)' };

const MAX_ATTEMPTS = 3;
const RECEIVING_STATES = statesThatMay('RECEIVE');

/** Timestamps as pg reads them from a row: a stale rate's time is worded exactly as when it came as a column. */
const parseTimestamptz: (text: string) => Date = types.getTypeParser(types.builtins.TIMESTAMPTZ);

/** What SQL function wallet_fund answers: the record for OK, one row with the refusal otherwise. */
type FundingRow = TransactionRow & { outcome: WalletMoneyResult['outcome']; detail: string[] | null };

/**
 * Credits, debits and transfers between wallets (wallet document §4, provider contract §4), and operator fundings.
 * Each is one balanced ledger entry, written with its operation and transaction records in one database call:
 * grouped with its concurrent neighbours (WalletMoneyBatch), in the wallet's currency or converted into it, or, for a
 * funding, a call of its own.
 */
@Injectable()
export class MoneyMovementsService {
  constructor(
    private readonly batch: WalletMoneyBatch,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  async creditOrDebit(principal: WalletPrincipal, command: MoneyCommand, dto: CreditDebitDto) {
    const result = await this.batch.submit({
      ...batchRequest(principal, command, requestFingerprint(command, normalised(dto)), dto),
      accountNumber: dto.account_number,
      destinationAccountNumber: null,
    });
    return transactionRecord(recordsOf(result)[0]);
  }

  async transfer(principal: WalletPrincipal, dto: TransferDto) {
    const result = await this.batch.submit({
      ...batchRequest(principal, 'TRANSFER', requestFingerprint('TRANSFER', normalised(dto)), dto),
      accountNumber: dto.source_account_number,
      destinationAccountNumber: dto.destination_account_number,
    });
    return pairRecord(recordsOf(result));
  }

  /**
   * Operator funding (admin CLI `wallet:fund`): an EXTERNAL_CREDIT from the client's settlement account, with
   * no client service and no fee. One call of SQL function wallet_fund; it has no reference, so nothing to replay.
   */
  async fund(clientId: string, accountNumber: string, amount: Decimal, narration = 'Wallet funding') {
    const values = [
      clientId,
      accountNumber,
      amount.toFixed(),
      requestFingerprint('FUNDING', { accountNumber, amount: amount.toFixed() }),
      narration,
      new Date(),
      RECEIVING_STATES,
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await runPrepared<FundingRow>(this.db, WALLET_FUND, values);
        return transactionRecord(recordsOf({ outcome: rows[0].outcome, detail: rows[0].detail ?? [], records: rows })[0]);
      } catch (error) {
        if (isRetryableTransactionError(error) && attempt < MAX_ATTEMPTS) continue;
        const failure = ledgerError(error);
        // A negative amount is a debit of the wallet, and its floor applies.
        if (failure instanceof FloorBreachError) throw MoneyRefusals.insufficientBalance(failure.accountNumber);
        throw failure;
      }
    }
  }
}

/** What a credit, debit and transfer request give the grouped path alike. */
function batchRequest(
  principal: WalletPrincipal,
  kind: WalletMoneyRequest['kind'],
  fingerprint: string,
  dto: CreditDebitDto | TransferDto,
): Omit<WalletMoneyRequest, 'accountNumber' | 'destinationAccountNumber'> {
  return {
    clientId: principal.clientId,
    kind,
    reference: dto.source_transaction_id,
    fingerprint,
    amount: new Money(dto.transaction_amount),
    currency: dto.currency,
    serviceCode: dto.client_service_code,
    narration: dto.transaction_narration ?? null,
    data: dto.source_transaction_data ?? null,
    transactionDate: dto.transaction_date ? new Date(dto.transaction_date) : new Date(),
  };
}

/** The records of a request the database carried out or replayed; its refusal, thrown in the documented words. */
function recordsOf(result: WalletMoneyResult): TransactionRow[] {
  const [first, second, third, fourth] = result.detail;
  switch (result.outcome) {
    case 'OK':
    case 'REPLAY':
      return result.records!;
    case 'CONFLICT':
      throw MoneyRefusals.referenceReused();
    case 'SAME_WALLET':
      throw MoneyRefusals.sameWallet();
    case 'WALLET_NOT_FOUND':
      throw MoneyRefusals.walletNotFound(first);
    case 'PROFILE_DEACTIVATED':
      throw MoneyRefusals.walletMayNot(first, '', second as MoneyRole, 'PROFILE_DEACTIVATED');
    case 'WALLET_STATE':
      throw MoneyRefusals.walletMayNot(first, second, third as MoneyRole, 'WALLET_STATE');
    case 'CURRENCY_MISMATCH':
      throw MoneyRefusals.currencyMismatch();
    case 'SERVICE_NOT_FOUND':
      throw MoneyRefusals.serviceNotFound();
    case 'SERVICE_INACTIVE':
      throw MoneyRefusals.serviceInactive(first);
    case 'NO_RATE':
      throw MoneyRefusals.noRate(first, second);
    case 'STALE_RATE':
      throw MoneyRefusals.staleRate(first, second, parseTimestamptz(third), Number(fourth));
    case 'TOO_SMALL':
      throw MoneyRefusals.tooSmallToConvert();
    case 'AMOUNT_BOUNDS':
      throw MoneyRefusals.amountOutOfBounds(first, second, third);
    case 'FEE_TOO_HIGH':
      throw MoneyRefusals.feeNotCovered(first);
    case 'INSUFFICIENT':
      throw MoneyRefusals.insufficientBalance(first);
  }
}

/** The request as compared for idempotency: amounts as decimals, so 100 and "100.00" are the same request. */
function normalised(dto: object): Record<string, unknown> {
  const body = { ...(dto as Record<string, unknown>) };
  body.transaction_amount = new Money(body.transaction_amount as string).toFixed();
  return body;
}
