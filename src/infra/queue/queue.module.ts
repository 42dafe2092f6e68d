import { BullModule } from '@nestjs/bullmq';
import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { createRedis } from './redis';

export const REDIS = Symbol('REDIS');

/** The shared Redis connection (health, rate limits) and BullMQ's root configuration. */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        connection: { url: config.redisUrl, maxRetriesPerRequest: null, retryStrategy: (n: number) => Math.min(n * 200, 5000) },
      }),
    }),
  ],
  providers: [{ provide: REDIS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createRedis(config.redisUrl) }],
  exports: [REDIS, BullModule],
})
export class QueueModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
