import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../infra/config/app-config';
import { tokenKey } from './token-key';
import { AccessTokens } from './access-tokens';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { CredentialStatusService } from './credential-status.service';
import { User } from './user.entity';
import { SignInAttempts } from './sign-in-attempts';
import { UsersService } from './users.service';
import { WalletAuthGuard } from './wallet-auth.guard';
import { WalletJwtStrategy } from './wallet-jwt.strategy';
import { ClientsModule } from '../clients/clients.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([User]),
    JwtModule.registerAsync({ inject: [APP_CONFIG], useFactory: (c: AppConfig) => ({ secret: tokenKey(c) as never }) }),
    ClientsModule,
  ],
  controllers: [AuthController],
  providers: [AuthService, UsersService, WalletJwtStrategy, WalletAuthGuard, CredentialStatusService, AccessTokens, SignInAttempts],
  exports: [UsersService, JwtModule, WalletAuthGuard, CredentialStatusService, AccessTokens, SignInAttempts],
})
export class AuthModule {}
