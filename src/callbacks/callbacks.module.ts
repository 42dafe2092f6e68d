import { Global, Module } from '@nestjs/common';
import { CallbackSettingsService } from './settings/callback-settings.service';
import { CallbacksController } from './delivery/callbacks.controller';
import { CallbacksService } from './delivery/callbacks.service';
import { CallbackResolver } from './url-safety/pinned-post';

/** Scheduling and reading callbacks (api and worker); delivery itself runs in the worker role. */
@Global()
@Module({
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbackSettingsService, CallbackResolver],
  exports: [CallbacksService, CallbackSettingsService, CallbackResolver],
})
export class CallbacksModule {}
