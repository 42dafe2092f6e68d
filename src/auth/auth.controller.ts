import { Body, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { Doc, WalletErrors } from '../common/openapi/api-docs';
import { AuthService } from './auth.service';
import { LoginDto, WalletToken } from './login.dto';
import { Public } from './principal';
import { WalletController } from './wallet-controller.decorator';

@WalletController('auth', 'auth', 'public')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('login')
  @HttpCode(200)
  @Doc('Log in as a wallet user', 'Answers the bearer token for every other /api/v1 route.')
  @ApiOkResponse({ type: WalletToken })
  @WalletErrors(400)
  login(@Body() body: LoginDto, @Ip() address: string) {
    return this.auth.login(body.username, body.password, address);
  }
}
