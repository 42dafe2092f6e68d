import { Body, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '../auth/principal';
import type { WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { readPage } from '../common/http/pagination';
import { AccountTypesService } from './account-types.service';
import { CreateAccountTypeDto, CreateWalletDto, WalletCommandQuery } from './wallet.dto';
import { WalletsService } from './wallets.service';

@WalletController('', 'wallets')
export class WalletsController {
  constructor(
    private readonly wallets: WalletsService,
    private readonly accountTypes: AccountTypesService,
  ) {}

  @Post('account-types')
  createAccountType(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateAccountTypeDto) {
    return this.accountTypes.create(principal, body);
  }

  @Get('account-types')
  listAccountTypes(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ) {
    return this.accountTypes.list(principal, readPage(query, request.body));
  }

  @Post('accounts')
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateWalletDto) {
    return this.wallets.create(principal, body);
  }

  @Get('accounts/account-number/:accountNumber')
  fetch(@CurrentPrincipal() principal: WalletPrincipal, @Param('accountNumber') accountNumber: string) {
    return this.wallets.fetch(principal, accountNumber);
  }

  @Post('accounts/account-number/:accountNumber')
  @HttpCode(200)
  command(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('accountNumber') accountNumber: string,
    @Query() query: WalletCommandQuery,
  ) {
    return this.wallets.applyCommand(principal, accountNumber, query.command);
  }
}
