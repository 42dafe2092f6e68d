import { Module } from '@nestjs/common';
import { HistoryService } from './history.service';
import { MoneyMovementsService } from './money-movements.service';
import { WalletReversalsService } from './wallet-reversals.service';
import { TransactionRecords } from './transaction-records';
import { TransactionsController } from './transactions.controller';
import { WalletMoneyBatch } from './wallet-money-batch';
import { AuthModule } from '../auth/auth.module';

@Module({
  imports: [AuthModule],
  controllers: [TransactionsController],
  providers: [MoneyMovementsService, WalletReversalsService, HistoryService, TransactionRecords, WalletMoneyBatch],
  exports: [MoneyMovementsService],
})
export class TransactionsModule {}
