import { Module } from '@nestjs/common';
import { CallbacksController } from './delivery/callbacks.controller';
import { CallbacksService } from './delivery/callbacks.service';
import { CallbackResolver } from '../common/url-safety/pinned-post';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';
import { ClientsModule } from '../clients/clients.module';

/** Scheduling and reading callbacks (api and worker); delivery itself runs in the worker role. */
@Module({
  imports: [GatewayAuthModule, ClientsModule],
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbackResolver],
  exports: [CallbacksService, CallbackResolver],
})
export class CallbacksModule {}
