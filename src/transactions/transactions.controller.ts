import { Body, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { CurrentPrincipal, type WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { Doc, WalletErrors } from '../common/openapi/api-docs';
import { HistoryService, type HistoryQuery } from './history.service';
import { MoneyMovementsService } from './money-movements.service';
import { WalletReversalsService } from './wallet-reversals.service';
import { CreditDebitDto, MoneyCommandQuery, ReversalDto, ReverseCommandQuery, TransferDto } from './transaction.dto';
import { TransactionHistoryPage, TransactionPair, TransactionRecord } from './transaction.responses';

@WalletController('', 'transactions')
export class TransactionsController {
  constructor(
    private readonly movements: MoneyMovementsService,
    private readonly reversals: WalletReversalsService,
    private readonly history: HistoryService,
  ) {}

  @Post('transactions')
  @Doc(
    'Credit or debit a wallet',
    'CREDIT_WALLET or DEBIT_WALLET in `command`; replaying a source_transaction_id answers the original result.',
  )
  @ApiCreatedResponse({ type: TransactionRecord })
  @WalletErrors(400, 403, {
    404: 'no wallet or client service of the caller has this number or code',
    409: 'source_transaction_id was used for a different request',
  })
  creditOrDebit(@CurrentPrincipal() principal: WalletPrincipal, @Query() query: MoneyCommandQuery, @Body() body: CreditDebitDto) {
    return this.movements.creditOrDebit(principal, query.command, body);
  }

  @Post('account-transfers')
  @Doc('Transfer between two wallets of the caller', 'Answers both sides; idempotent on source_transaction_id.')
  @ApiCreatedResponse({ type: TransactionPair })
  @WalletErrors(400, 403, {
    404: 'no wallet or client service of the caller has this number or code',
    409: 'source_transaction_id was used for a different request',
  })
  transfer(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: TransferDto) {
    return this.movements.transfer(principal, body);
  }

  @Post('transactions/:transactionId')
  @Doc('Reverse a transaction', 'command=REVERSE; moves the money back and answers both sides of the reversal. The body is optional.')
  @ApiBody({ type: ReversalDto, required: false })
  @ApiCreatedResponse({ type: TransactionPair })
  @WalletErrors(400, 403, { 404: 'no transaction of the caller has this id', 409: 'the transaction was already reversed' })
  reverse(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('transactionId') transactionId: string,
    @Query() _query: ReverseCommandQuery,
    @Body() body: ReversalDto,
  ) {
    return this.reversals.reverse(principal, transactionId, body ?? {});
  }

  @Get('transactions/:transactionId')
  @Doc('Fetch a transaction')
  @ApiOkResponse({ type: TransactionRecord })
  @WalletErrors({ 404: 'no transaction of the caller has this id' })
  one(@CurrentPrincipal() principal: WalletPrincipal, @Param('transactionId') transactionId: string) {
    return this.history.one(principal, transactionId);
  }

  @Get('accounts/account-number/:accountNumber/transactions')
  @Doc(
    "A wallet's transactions",
    'Oldest first, in pages of `limit`, continued with `cursor`; `start_date` and `end_date` bound the period.',
  )
  @ApiQuery({ name: 'start_date', required: false, description: 'ISO 8601; inclusive' })
  @ApiQuery({ name: 'end_date', required: false, description: 'ISO 8601; inclusive' })
  @ApiQuery({ name: 'limit', required: false, type: Number })
  @ApiQuery({ name: 'cursor', required: false, description: 'next_cursor of the previous page' })
  @ApiOkResponse({ type: TransactionHistoryPage })
  @WalletErrors(400, { 404: 'no wallet of the caller has this account number' })
  ofWallet(@CurrentPrincipal() principal: WalletPrincipal, @Param('accountNumber') accountNumber: string, @Query() query: HistoryQuery) {
    return this.history.ofWallet(principal, accountNumber, query);
  }
}
