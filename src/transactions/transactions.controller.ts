import { Body, Get, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, type WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { HistoryService, type HistoryQuery } from './history.service';
import { MoneyMovementsService } from './money-movements.service';
import { ReversalsService } from './reversals.service';
import { CreditDebitDto, MoneyCommandQuery, ReversalDto, ReverseCommandQuery, TransferDto } from './transaction.dto';

@WalletController('', 'transactions')
export class TransactionsController {
  constructor(
    private readonly movements: MoneyMovementsService,
    private readonly reversals: ReversalsService,
    private readonly history: HistoryService,
  ) {}

  @Post('transactions')
  creditOrDebit(@CurrentPrincipal() principal: WalletPrincipal, @Query() query: MoneyCommandQuery, @Body() body: CreditDebitDto) {
    return this.movements.creditOrDebit(principal, query.command, body);
  }

  @Post('account-transfers')
  transfer(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: TransferDto) {
    return this.movements.transfer(principal, body);
  }

  @Post('transactions/:transactionId')
  reverse(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('transactionId') transactionId: string,
    @Query() _query: ReverseCommandQuery,
    @Body() body: ReversalDto,
  ) {
    return this.reversals.reverse(principal, transactionId, body ?? {});
  }

  @Get('transactions/:transactionId')
  one(@CurrentPrincipal() principal: WalletPrincipal, @Param('transactionId') transactionId: string) {
    return this.history.one(principal, transactionId);
  }

  @Get('accounts/account-number/:accountNumber/transactions')
  ofWallet(@CurrentPrincipal() principal: WalletPrincipal, @Param('accountNumber') accountNumber: string, @Query() query: HistoryQuery) {
    return this.history.ofWallet(principal, accountNumber, query);
  }
}
