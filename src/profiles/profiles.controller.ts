import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal } from '../auth/principal';
import type { WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { CreateProfileDto, ProfileCommandQuery } from './profile.dto';
import { ProfilesService } from './profiles.service';

@WalletController('', 'profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Post('profiles')
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateProfileDto) {
    return this.profiles.create(principal, body);
  }

  @Get('client-profiles/client-profile-id/:clientProfileId')
  fetch(@CurrentPrincipal() principal: WalletPrincipal, @Param('clientProfileId') clientProfileId: string) {
    return this.profiles.fetch(principal, clientProfileId);
  }

  @Post('profiles/client-profile-id/:clientProfileId')
  @HttpCode(200)
  command(
    @CurrentPrincipal() principal: WalletPrincipal,
    @Param('clientProfileId') clientProfileId: string,
    @Query() query: ProfileCommandQuery,
  ) {
    return this.profiles.applyCommand(principal, clientProfileId, query.command);
  }
}
