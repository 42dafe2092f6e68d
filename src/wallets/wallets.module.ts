import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountType } from './account-type.entity';
import { AccountTypesService } from './account-types.service';
import { Wallet } from './wallet.entity';
import { WalletsController } from './wallets.controller';
import { WalletsService } from './wallets.service';

@Module({
  imports: [TypeOrmModule.forFeature([Wallet, AccountType])],
  controllers: [WalletsController],
  providers: [WalletsService, AccountTypesService],
  exports: [WalletsService, AccountTypesService],
})
export class WalletsModule {}
