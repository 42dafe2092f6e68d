import { Global, Module } from '@nestjs/common';
import { CallbackSettingsService } from './callback-settings.service';
import { CallbacksController } from './callbacks.controller';
import { CallbacksService } from './callbacks.service';
import { CallbackResolver } from './pinned-post';

/** Scheduling and reading callbacks (api and worker); delivery itself runs in the worker role. */
@Global()
@Module({
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbackSettingsService, CallbackResolver],
  exports: [CallbacksService, CallbackSettingsService, CallbackResolver],
})
export class CallbacksModule {}
