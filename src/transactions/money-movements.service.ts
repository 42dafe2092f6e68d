import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { requestFingerprint } from '../common/fingerprint';
import { Money } from '../common/money';
import { isRetryableTransactionError } from '../common/errors/pg-errors';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { FloorBreachError } from '../ledger/ledger.errors';
import { ledgerError } from '../ledger/ledger.service';
import { statesThatMay } from '../wallets/wallet-state-machine';
import { MoneyRefusals } from './money-refusals';
import { CreditDebitDto, MoneyCommand, TransferDto } from './transaction.dto';
import { pairRecord, TransactionRow, transactionRecord } from './transaction-records';
import { WalletMoneyAnswer, WalletMoneyBatch, WalletMoneyRequest } from './wallet-money-batch';

/** An operator's funding of a wallet, as SQL function wallet_fund takes it. */
export interface WalletFunding {
  clientId: string;
  accountNumber: string;
  amount: Decimal;
  fingerprint: string;
  narration: string;
  transactionDate: Date;
}

/** wallet_fund answers as wallet_money_batch does, with the outcomes a funding can have. */
export type WalletFundAnswer = WalletMoneyAnswer<'OK' | 'WALLET_NOT_FOUND' | 'PROFILE_DEACTIVATED' | 'WALLET_STATE'>;

const WALLET_FUND: PreparedStatement = {
  name: 'wallet_fund',
  text: `SELECT outcome, detail, records FROM wallet_fund(p_client_id => $1, p_account_number => $2, p_amount => $3,
           p_fingerprint => $4, p_narration => $5, p_transaction_date => $6, p_receiving_states => $7)`,
};

const RECEIVING_STATES = statesThatMay('RECEIVE');

/** SQL function wallet_fund (src/transactions/sql/wallet_fund.sql): one call, its own transaction. */
export async function walletFund(db: DataSource, funding: WalletFunding): Promise<WalletFundAnswer> {
  const [answer] = await runPrepared<WalletFundAnswer>(db, WALLET_FUND, [
    funding.clientId,
    funding.accountNumber,
    funding.amount.toFixed(),
    funding.fingerprint,
    funding.narration,
    funding.transactionDate,
    RECEIVING_STATES,
  ]);
  return answer;
}

const MAX_ATTEMPTS = 3;

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
    const answer = await this.batch.submit({
      ...batchRequest(principal, command, requestFingerprint(command, normalised(dto)), dto),
      account_number: dto.account_number,
      destination_account_number: null,
    });
    return transactionRecord(recordsOf(answer)[0]);
  }

  async transfer(principal: WalletPrincipal, dto: TransferDto) {
    const answer = await this.batch.submit({
      ...batchRequest(principal, 'TRANSFER', requestFingerprint('TRANSFER', normalised(dto)), dto),
      account_number: dto.source_account_number,
      destination_account_number: dto.destination_account_number,
    });
    return pairRecord(recordsOf(answer));
  }

  /**
   * Operator funding (admin CLI `wallet:fund`): an EXTERNAL_CREDIT from the client's settlement account, with
   * no client service and no fee. One call of SQL function wallet_fund; it has no reference, so nothing to replay.
   */
  async fund(clientId: string, accountNumber: string, amount: Decimal, narration = 'Wallet funding') {
    const funding: WalletFunding = {
      clientId,
      accountNumber,
      amount,
      fingerprint: requestFingerprint('FUNDING', { accountNumber, amount: amount.toFixed() }),
      narration,
      transactionDate: new Date(),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        return transactionRecord(recordsOf(await walletFund(this.db, funding))[0]);
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
): Omit<WalletMoneyRequest, 'account_number' | 'destination_account_number'> {
  return {
    client_id: principal.clientId,
    kind,
    reference: dto.source_transaction_id,
    fingerprint,
    amount: new Money(dto.transaction_amount).toFixed(),
    currency: dto.currency,
    service_code: dto.client_service_code,
    narration: dto.transaction_narration ?? null,
    data: dto.source_transaction_data ?? null,
    transaction_date: (dto.transaction_date ? new Date(dto.transaction_date) : new Date()).toISOString(),
  };
}

/** The records of a request the database carried out or replayed; its refusal, thrown in the documented words. */
function recordsOf(answer: WalletMoneyAnswer): TransactionRow[] {
  switch (answer.outcome) {
    case 'OK':
    case 'REPLAY':
      return answer.records;
    case 'CONFLICT':
      throw MoneyRefusals.referenceReused();
    case 'SAME_WALLET':
      throw MoneyRefusals.sameWallet();
    case 'WALLET_NOT_FOUND':
      throw MoneyRefusals.walletNotFound(answer.detail.account_number);
    case 'PROFILE_DEACTIVATED':
      throw MoneyRefusals.profileDeactivated(answer.detail.account_number);
    case 'WALLET_STATE':
      throw MoneyRefusals.walletState(answer.detail.account_number, answer.detail.status, answer.detail.role);
    case 'CURRENCY_MISMATCH':
      throw MoneyRefusals.currencyMismatch();
    case 'SERVICE_NOT_FOUND':
      throw MoneyRefusals.serviceNotFound();
    case 'SERVICE_INACTIVE':
      throw MoneyRefusals.serviceInactive(answer.detail.service_code);
    case 'NO_RATE':
      throw MoneyRefusals.noRate(answer.detail.from_currency, answer.detail.to_currency);
    case 'STALE_RATE': {
      const { from_currency, to_currency, newest_rate_at, max_age_ms } = answer.detail;
      throw MoneyRefusals.staleRate(from_currency, to_currency, new Date(newest_rate_at), max_age_ms);
    }
    case 'TOO_SMALL':
      throw MoneyRefusals.tooSmallToConvert();
    case 'AMOUNT_BOUNDS':
      throw MoneyRefusals.amountOutOfBounds(answer.detail.minimum, answer.detail.maximum, answer.detail.currency);
    case 'FEE_TOO_HIGH':
      throw MoneyRefusals.feeNotCovered(answer.detail.fee);
    case 'INSUFFICIENT':
      throw MoneyRefusals.insufficientBalance(answer.detail.account_number);
  }
}

/** The request as compared for idempotency: amounts as decimals, so 100 and "100.00" are the same request. */
function normalised(dto: object): Record<string, unknown> {
  const body = { ...(dto as Record<string, unknown>) };
  body.transaction_amount = new Money(body.transaction_amount as string).toFixed();
  return body;
}
