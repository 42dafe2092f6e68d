import { Module } from '@nestjs/common';
import { HistoryService } from './history.service';
import { MoneyMovementsService } from './money-movements.service';
import { ReversalsService } from './reversals.service';
import { TransactionRecords } from './transaction-records';
import { TransactionsController } from './transactions.controller';
import { WalletMoneyBatch } from './wallet-money-batch';

@Module({
  controllers: [TransactionsController],
  providers: [MoneyMovementsService, ReversalsService, HistoryService, TransactionRecords, WalletMoneyBatch],
  exports: [MoneyMovementsService],
})
export class TransactionsModule {}
