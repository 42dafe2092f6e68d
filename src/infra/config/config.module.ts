import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from './app-config';
import { resolveConfig } from './server-secret';

@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: () => resolveConfig() }],
  exports: [APP_CONFIG],
})
export class ConfigModule {}
