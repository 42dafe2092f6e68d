import { Global, Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service';
import { GatewayAuthController } from './gateway-auth.controller';
import { GatewayAuthGuard } from './gateway-auth.guard';

@Global()
@Module({
  controllers: [GatewayAuthController],
  providers: [ApiKeysService, GatewayAuthGuard],
  exports: [ApiKeysService, GatewayAuthGuard],
})
export class GatewayAuthModule {}
