import { BadRequestException, Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { ClientServicesService, ServiceTerms } from '../client-services/client-services.service';
import { feeFor } from '../client-services/fees';
import { Money, roundMoney } from '../common/money';
import { ConversionDirection, FxService } from '../fx/fx.service';
import { EntryBuilder } from '../ledger/entry-builder';
import { LedgerService } from '../ledger/ledger.service';
import { IdempotentExecutor } from './idempotent-executor';
import { MoneyAccounts } from './money-accounts';
import { CreditDebitDto, MoneyCommand, TransferDto } from './transaction.dto';
import { MoneyRefusals } from './money-refusals';
import { Leg, pairRecord, TransactionRow, transactionRecord } from './transaction-records';
import { WalletMoneyBatch, WalletMoneyRequest, WalletMoneyResult } from './wallet-money-batch';
import type { MoneyRole } from '../wallets/wallet-state-machine';
import { requestFingerprint } from '../common/fingerprint';

/** An amount priced in the wallet's currency, with the fee and, when converted, what the merchant sent. */
interface Priced {
  amount: Decimal;
  fee: Decimal;
  original: { currency: string; amount: Decimal; exchangeRate: Decimal } | null;
}

/**
 * Credits, debits and transfers between wallets (wallet document §4, provider contract §4). Each is one
 * balanced ledger entry, written with its operation and transaction records in one DB transaction: grouped with
 * its concurrent neighbours in one database call (WalletMoneyBatch), or, when its amount must be converted, in a
 * transaction of its own.
 */
@Injectable()
export class MoneyMovementsService {
  constructor(
    private readonly batch: WalletMoneyBatch,
    private readonly executor: IdempotentExecutor,
    private readonly accounts: MoneyAccounts,
    private readonly services: ClientServicesService,
    private readonly ledger: LedgerService,
    private readonly fx: FxService,
  ) {}

  async creditOrDebit(principal: WalletPrincipal, command: MoneyCommand, dto: CreditDebitDto) {
    const fingerprint = requestFingerprint(command, normalised(dto));
    const result = await this.batch.submit({
      ...batchRequest(principal, command, fingerprint, dto),
      accountNumber: dto.account_number,
      destinationAccountNumber: null,
    });
    if (result.outcome !== 'CONVERT') return transactionRecord(recordsOf(result)[0]);
    return this.convertedCreditOrDebit(principal, command, dto, fingerprint);
  }

  async transfer(principal: WalletPrincipal, dto: TransferDto) {
    const fingerprint = requestFingerprint('TRANSFER', normalised(dto));
    const result = await this.batch.submit({
      ...batchRequest(principal, 'TRANSFER', fingerprint, dto),
      accountNumber: dto.source_account_number,
      destinationAccountNumber: dto.destination_account_number,
    });
    if (result.outcome !== 'CONVERT') return pairRecord(recordsOf(result));
    return this.convertedTransfer(principal, dto, fingerprint);
  }

  /**
   * A credit or debit in another currency than its wallet's, which the grouped path hands back: priced at the
   * current rate and posted through the FX position accounts, in a transaction of its own.
   */
  private async convertedCreditOrDebit(principal: WalletPrincipal, command: MoneyCommand, dto: CreditDebitDto, fingerprint: string) {
    const request = { clientId: principal.clientId, reference: dto.source_transaction_id, kind: command, fingerprint };
    return this.executor.run(
      request,
      async (manager, recordOperation) => {
        const [wallet] = await this.accounts.walletsForMoney(manager, principal.clientId, [dto.account_number]);
        const role = command === 'CREDIT' ? 'RECEIVE' : 'PAY';
        this.accounts.assertMay(wallet, role);
        const service = await this.usableService(manager, principal.clientId, dto.client_service_code);
        const priced = await this.price(manager, service, dto, wallet.currency, command === 'CREDIT' ? 'INTO_WALLET' : 'OUT_OF_WALLET');
        if (command === 'CREDIT' && priced.fee.gte(priced.amount)) {
          throw MoneyRefusals.feeNotCovered(priced.fee);
        }

        const settlement = await this.ledger.systemAccount(manager, principal.clientId, 'SETTLEMENT', dto.currency);
        const entry = new EntryBuilder();
        const outside = priced.original?.amount ?? priced.amount;
        if (command === 'CREDIT') {
          entry.debit(settlement.id, outside).credit(wallet.id, priced.amount.minus(priced.fee));
        } else {
          entry.debit(wallet.id, priced.amount.plus(priced.fee)).credit(settlement.id, outside);
        }
        await this.addFee(manager, entry, principal.clientId, wallet.currency, priced.fee);
        await this.addConversion(
          manager,
          entry,
          principal.clientId,
          wallet.currency,
          priced,
          command === 'CREDIT' ? 'INTO_WALLET' : 'OUT_OF_WALLET',
        );

        const posted = await this.ledger.postEntry(manager, {
          clientId: principal.clientId,
          kind: `WALLET_${command}`,
          lines: entry.lines(),
        });
        return recordOperation(posted.entryId, [
          {
            ...this.legDefaults(dto, service),
            id: randomUUID(),
            accountId: wallet.id,
            accountNumber: wallet.accountNumber,
            accountKind: 'WALLET',
            type: command,
            source: command === 'CREDIT' ? 'EXTERNAL_CREDIT' : 'EXTERNAL_DEBIT',
            currency: wallet.currency,
            amount: priced.amount,
            fee: priced.fee,
            movement: posted.movements.get(wallet.id)!,
            otherPartyAccount: settlement.accountNumber,
            otherPartyTransactionHash: null,
            original: priced.original,
          },
        ]);
      },
      (rows) => transactionRecord(rows[0]),
    );
  }

  /** A transfer whose amount is in another currency than the wallets': the amount is converted, in a transaction of its own. */
  private async convertedTransfer(principal: WalletPrincipal, dto: TransferDto, fingerprint: string) {
    const request = { clientId: principal.clientId, reference: dto.source_transaction_id, kind: 'TRANSFER' as const, fingerprint };
    return this.executor.run(
      request,
      async (manager, recordOperation) => {
        if (dto.source_account_number === dto.destination_account_number) {
          throw MoneyRefusals.sameWallet();
        }
        const [source, destination] = await this.accounts.walletsForMoney(manager, principal.clientId, [
          dto.source_account_number,
          dto.destination_account_number,
        ]);
        this.accounts.assertMay(source, 'PAY');
        this.accounts.assertMay(destination, 'RECEIVE');
        if (source.currency !== destination.currency) {
          throw MoneyRefusals.currencyMismatch();
        }
        const service = await this.usableService(manager, principal.clientId, dto.client_service_code);
        // Only the amount is converted: no money in the request currency moves, so there is no FX position.
        const priced = await this.price(manager, service, dto, source.currency, 'OUT_OF_WALLET');
        const entry = new EntryBuilder().debit(source.id, priced.amount.plus(priced.fee)).credit(destination.id, priced.amount);
        await this.addFee(manager, entry, principal.clientId, source.currency, priced.fee);

        const posted = await this.ledger.postEntry(manager, {
          clientId: principal.clientId,
          kind: 'WALLET_TRANSFER',
          lines: entry.lines(),
        });
        const debitId = randomUUID();
        const creditId = randomUUID();
        const common = { ...this.legDefaults(dto, service), currency: source.currency, amount: priced.amount, original: priced.original };
        return recordOperation(posted.entryId, [
          {
            ...common,
            id: debitId,
            accountId: source.id,
            accountNumber: source.accountNumber,
            accountKind: 'WALLET',
            type: 'DEBIT',
            source: 'INTERNAL_TRANSFER_DEBIT',
            fee: priced.fee,
            movement: posted.movements.get(source.id)!,
            otherPartyAccount: destination.accountNumber,
            otherPartyTransactionHash: creditId,
          },
          {
            ...common,
            id: creditId,
            accountId: destination.id,
            accountNumber: destination.accountNumber,
            accountKind: 'WALLET',
            type: 'CREDIT',
            source: 'INTERNAL_TRANSFER_CREDIT',
            fee: new Money(0),
            movement: posted.movements.get(destination.id)!,
            otherPartyAccount: source.accountNumber,
            otherPartyTransactionHash: debitId,
          },
        ]);
      },
      pairRecord,
    );
  }

  /**
   * Operator funding (admin CLI `wallet:fund`): an EXTERNAL_CREDIT from the client's settlement account, with
   * no client service and no fee.
   */
  async fund(clientId: string, accountNumber: string, amount: Decimal, narration = 'Wallet funding') {
    return this.executor.run(
      {
        clientId,
        reference: null,
        kind: 'FUNDING',
        fingerprint: requestFingerprint('FUNDING', { accountNumber, amount: amount.toFixed() }),
      },
      async (manager, recordOperation) => {
        const [wallet] = await this.accounts.walletsForMoney(manager, clientId, [accountNumber]);
        this.accounts.assertMay(wallet, 'RECEIVE');
        const settlement = await this.ledger.systemAccount(manager, clientId, 'SETTLEMENT', wallet.currency);
        const entry = new EntryBuilder().debit(settlement.id, amount).credit(wallet.id, amount);
        const posted = await this.ledger.postEntry(manager, { clientId, kind: 'WALLET_FUNDING', lines: entry.lines() });
        return recordOperation(posted.entryId, [
          {
            id: randomUUID(),
            accountId: wallet.id,
            accountNumber: wallet.accountNumber,
            accountKind: 'WALLET',
            clientServiceId: null,
            clientServiceCode: null,
            type: 'CREDIT',
            source: 'EXTERNAL_CREDIT',
            currency: wallet.currency,
            amount,
            fee: new Money(0),
            movement: posted.movements.get(wallet.id)!,
            otherPartyAccount: settlement.accountNumber,
            otherPartyTransactionHash: null,
            sourceTransactionId: null,
            sourceTransactionData: null,
            narration,
            transactionDate: new Date(),
            original: null,
          },
        ]);
      },
      (rows) => transactionRecord(rows[0]),
    );
  }

  private async usableService(manager: EntityManager, clientId: string, code: string): Promise<ServiceTerms> {
    const service = await this.services.termsFor(manager, clientId, code);
    if (!service.isActive) throw MoneyRefusals.serviceInactive(code);
    return service;
  }

  /** Converts the request amount into the wallet's currency, checks the service bounds there, and prices the fee. */
  private async price(
    manager: EntityManager,
    service: ServiceTerms,
    dto: { transaction_amount: number | string; currency: string },
    walletCurrency: string,
    direction: ConversionDirection,
  ): Promise<Priced> {
    const requested = new Money(dto.transaction_amount);
    let original: Priced['original'] = null;
    let amount = requested;
    if (dto.currency !== walletCurrency) {
      const exchangeRate = await this.fx.conversionRate(manager, dto.currency, walletCurrency, direction);
      amount = roundMoney(requested.times(exchangeRate));
      original = { currency: dto.currency, amount: requested, exchangeRate };
      if (amount.isZero()) throw new BadRequestException('Transaction amount is too small to convert');
    }
    if (amount.lt(service.minimumAmount) || amount.gt(service.maximumAmount)) {
      throw MoneyRefusals.amountOutOfBounds(service.minimumAmount, service.maximumAmount, walletCurrency);
    }
    return { amount, fee: feeFor(service.fees, amount), original };
  }

  private async addFee(manager: EntityManager, entry: EntryBuilder, clientId: string, currency: string, fee: Decimal): Promise<void> {
    if (fee.isZero()) return;
    const feeIncome = await this.ledger.systemAccount(manager, clientId, 'FEE_INCOME', currency);
    entry.credit(feeIncome.id, fee);
  }

  /**
   * Money crossing currencies passes through the FX position accounts: the outside currency is exchanged
   * there for the wallet's currency, so each currency's postings balance on their own.
   */
  private async addConversion(
    manager: EntityManager,
    entry: EntryBuilder,
    clientId: string,
    walletCurrency: string,
    priced: Priced,
    direction: ConversionDirection,
  ): Promise<void> {
    if (!priced.original) return;
    const outside = await this.ledger.systemAccount(manager, clientId, 'FX_POSITION', priced.original.currency);
    const inside = await this.ledger.systemAccount(manager, clientId, 'FX_POSITION', walletCurrency);
    if (direction === 'INTO_WALLET') {
      entry.credit(outside.id, priced.original.amount).debit(inside.id, priced.amount);
    } else {
      entry.debit(outside.id, priced.original.amount).credit(inside.id, priced.amount);
    }
  }

  private legDefaults(
    dto: { source_transaction_id: string; source_transaction_data?: unknown; transaction_narration?: string; transaction_date?: string },
    service: ServiceTerms,
  ): Pick<
    Leg,
    'clientServiceId' | 'clientServiceCode' | 'sourceTransactionId' | 'sourceTransactionData' | 'narration' | 'transactionDate'
  > {
    return {
      clientServiceId: service.id,
      clientServiceCode: service.code,
      sourceTransactionId: dto.source_transaction_id,
      sourceTransactionData: dto.source_transaction_data ?? null,
      narration: dto.transaction_narration ?? null,
      transactionDate: dto.transaction_date ? new Date(dto.transaction_date) : new Date(),
    };
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

/** The records of a request the grouped path carried out or replayed; its refusal, thrown in the documented words. */
function recordsOf(result: WalletMoneyResult): TransactionRow[] {
  const [first, second, third] = result.detail;
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
    case 'AMOUNT_BOUNDS':
      throw MoneyRefusals.amountOutOfBounds(first, second, third);
    case 'FEE_TOO_HIGH':
      throw MoneyRefusals.feeNotCovered(first);
    case 'INSUFFICIENT':
      throw MoneyRefusals.insufficientBalance(first);
    case 'CONVERT':
      throw new Error('a conversion is not answered from the grouped path');
  }
}

/** The request as compared for idempotency: amounts as decimals, so 100 and "100.00" are the same request. */
function normalised(dto: object): Record<string, unknown> {
  const body = { ...(dto as Record<string, unknown>) };
  body.transaction_amount = new Money(body.transaction_amount as string).toFixed();
  return body;
}
