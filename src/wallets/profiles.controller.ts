import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/principal';
import type { WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { Doc, NoRequestBody, WalletErrors } from '../common/openapi/api-docs';
import { CreateProfileDto, ProfileCommandQuery } from './profile.dto';
import { ProfileDetails, ProfileRecord, ProfileStatusChange } from './profile.responses';
import { ProfilesService } from './profiles.service';

@WalletController('', 'profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Post('profiles')
  @Doc('Create a profile', 'The person or business wallets belong to; msisdns are answered as numbers here.')
  @ApiCreatedResponse({ type: ProfileRecord })
  @WalletErrors(400, 403, { 409: 'a profile with this client_profile_id exists' })
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateProfileDto) {
    return this.profiles.create(principal, body);
  }

  @Get('client-profiles/client-profile-id/:clientProfileId')
  @Doc('Fetch a profile with its wallets')
  @ApiOkResponse({ type: ProfileDetails })
  @WalletErrors({ 404: 'no profile of the caller has this client_profile_id' })
  fetch(@CurrentPrincipal() principal: WalletPrincipal, @Param('clientProfileId') clientProfileId: string) {
    return this.profiles.fetch(principal, clientProfileId);
  }

  @Post('profiles/client-profile-id/:clientProfileId')
  @HttpCode(200)
  @Doc('Activate or deactivate a profile', 'The command is in the query string; there is no body.')
  @NoRequestBody()
  @ApiOkResponse({ type: ProfileStatusChange })
  @WalletErrors(400, { 404: 'no profile of the caller has this client_profile_id' })
  command(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('clientProfileId') clientProfileId: string,
    @Query() query: ProfileCommandQuery,
  ) {
    return this.profiles.applyCommand(principal, clientProfileId, query.command);
  }
}
