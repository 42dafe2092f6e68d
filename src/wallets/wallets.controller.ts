import { Body, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '../auth/principal';
import type { WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { readPage } from '../common/http/pagination';
import { ApiPageQuery, Doc, NoRequestBody, WalletErrors } from '../common/openapi/api-docs';
import { AccountTypesService } from './account-types.service';
import { CreateAccountTypeDto, CreateWalletDto, WalletCommandQuery } from './wallet.dto';
import { AccountTypeList, AccountTypeRecord, WalletDetails, WalletRecord, WalletStatusChange } from './wallet.responses';
import { WalletsService } from './wallets.service';

@WalletController('', 'wallets')
export class WalletsController {
  constructor(
    private readonly wallets: WalletsService,
    private readonly accountTypes: AccountTypesService,
  ) {}

  @Post('account-types')
  @Doc('Create an account type', 'The kind of wallet (savings, float, …) wallets are opened as.')
  @ApiCreatedResponse({ type: AccountTypeRecord })
  @WalletErrors(400, 403)
  createAccountType(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateAccountTypeDto) {
    return this.accountTypes.create(principal, body);
  }

  @Get('account-types')
  @Doc('List account types')
  @ApiPageQuery()
  @ApiOkResponse({ type: AccountTypeList })
  @WalletErrors(400)
  listAccountTypes(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
  ) {
    return this.accountTypes.list(principal, readPage(query, request.body));
  }

  @Post('accounts')
  @Doc('Open a wallet', 'A wallet of an active profile, as an active account type, in one currency.')
  @ApiCreatedResponse({ type: WalletRecord })
  @WalletErrors(400, 403, { 404: 'no profile or account type of the caller has this id or code' })
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateWalletDto) {
    return this.wallets.create(principal, body);
  }

  @Get('accounts/account-number/:accountNumber')
  @Doc('Fetch a wallet with its balance, profile and client')
  @ApiOkResponse({ type: WalletDetails })
  @WalletErrors({ 404: 'no wallet of the caller has this account number' })
  fetch(@CurrentPrincipal() principal: WalletPrincipal, @Param('accountNumber') accountNumber: string) {
    return this.wallets.fetch(principal, accountNumber);
  }

  @Post('accounts/account-number/:accountNumber')
  @HttpCode(200)
  @Doc("Change a wallet's status", 'ACTIVATE, DORMANT, SUSPEND or CLOSE, in the query string; closing needs a zero balance.')
  @NoRequestBody()
  @ApiOkResponse({ type: WalletStatusChange })
  @WalletErrors(400, {
    404: 'no wallet of the caller has this account number',
    409: 'the status cannot change so, or the balance is not zero',
  })
  command(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('accountNumber') accountNumber: string,
    @Query() query: WalletCommandQuery,
  ) {
    return this.wallets.applyCommand(principal, accountNumber, query.command);
  }
}
