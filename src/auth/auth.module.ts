import { Global, Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../infra/config/app-config';
import { tokenKey } from './token-key';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { CredentialStatusService } from './credential-status.service';
import { JwtStrategy } from './jwt.strategy';
import { User } from './user.entity';
import { UsersService } from './users.service';
import { WalletAuthGuard } from './wallet-auth.guard';

@Global()
@Module({
  imports: [
    TypeOrmModule.forFeature([User]),
    PassportModule,
    JwtModule.registerAsync({ inject: [APP_CONFIG], useFactory: (c: AppConfig) => ({ secret: tokenKey(c) as never }) }),
  ],
  controllers: [AuthController],
  providers: [AuthService, UsersService, JwtStrategy, WalletAuthGuard, CredentialStatusService],
  exports: [UsersService, JwtModule, WalletAuthGuard, CredentialStatusService],
})
export class AuthModule {}
