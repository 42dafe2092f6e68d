import { Module } from '@nestjs/common';
import { ClientServicesModule } from '../client-services/client-services.module';
import { HistoryService } from './history.service';
import { IdempotentExecutor } from './idempotent-executor';
import { MoneyAccounts } from './money-accounts';
import { MoneyMovementsService } from './money-movements.service';
import { ReversalsService } from './reversals.service';
import { TransactionRecords } from './transaction-records';
import { TransactionsController } from './transactions.controller';
import { WalletMoneyBatch } from './wallet-money-batch';
import { WalletOperations } from './wallet-operations';

@Module({
  imports: [ClientServicesModule],
  controllers: [TransactionsController],
  providers: [
    MoneyMovementsService,
    ReversalsService,
    HistoryService,
    IdempotentExecutor,
    MoneyAccounts,
    TransactionRecords,
    WalletOperations,
    WalletMoneyBatch,
  ],
  exports: [MoneyMovementsService],
})
export class TransactionsModule {}
