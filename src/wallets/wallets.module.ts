import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountType } from './account-type.entity';
import { AccountTypesService } from './account-types.service';
import { Wallet } from './wallet.entity';
import { WalletsController } from './wallets.controller';
import { WalletsService } from './wallets.service';
import { AuthModule } from '../auth/auth.module';
import { LedgerModule } from '../ledger/ledger.module';

@Module({
  imports: [TypeOrmModule.forFeature([Wallet, AccountType]), AuthModule, LedgerModule],
  controllers: [WalletsController],
  providers: [WalletsService, AccountTypesService],
  exports: [WalletsService, AccountTypesService],
})
export class WalletsModule {}
