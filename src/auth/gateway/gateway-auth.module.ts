import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service';
import { GatewayAuthController } from './gateway-auth.controller';
import { GatewayAuthGuard } from './gateway-auth.guard';
import { GatewayTokenStrategy } from './gateway-token.strategy';
import { AuthModule } from '../auth.module';

@Module({
  imports: [AuthModule],
  controllers: [GatewayAuthController],
  providers: [ApiKeysService, GatewayTokenStrategy, GatewayAuthGuard],
  exports: [ApiKeysService, GatewayAuthGuard],
})
export class GatewayAuthModule {}
