import { Body, HttpCode, Post } from '@nestjs/common';
import { AuthService } from './auth.service';
import { SignInThrottle } from '../infra/throttling/sign-in-throttle';
import { LoginDto } from './login.dto';
import { Public } from './principal';
import { WalletController } from './wallet-controller.decorator';

@WalletController('auth', 'auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Public()
  @Post('login')
  @SignInThrottle('username')
  @HttpCode(200)
  login(@Body() body: LoginDto) {
    return this.auth.login(body.username, body.password);
  }
}
