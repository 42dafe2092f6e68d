import { BullModule } from '@nestjs/bullmq';
import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { OutboxService } from './outbox.service';
import { QUEUES } from './queues';
import { createRedis } from './redis';

export const REDIS = Symbol('REDIS');

const retry = (attempt: number) => Math.min(attempt * 200, 5000);

/**
 * The shared Redis connection (health, metrics), BullMQ's configuration and its queues. Producers fail fast
 * while Redis is away (the outbox keeps the work); workers wait for it to come back.
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        connection: { url: config.redisUrl, maxRetriesPerRequest: null, retryStrategy: retry },
        defaultJobOptions: {
          attempts: 8,
          backoff: { type: 'exponential', delay: 500 },
          removeOnComplete: { age: 24 * 3600, count: 50_000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      }),
    }),
    ...Object.values(QUEUES).map((name) =>
      BullModule.registerQueueAsync({
        name,
        inject: [APP_CONFIG],
        useFactory: (config: AppConfig) => ({
          connection: { url: config.redisUrl, maxRetriesPerRequest: null, enableOfflineQueue: false, retryStrategy: retry },
        }),
      }),
    ),
  ],
  providers: [OutboxService, { provide: REDIS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createRedis(config.redisUrl) }],
  exports: [REDIS, BullModule, OutboxService],
})
export class QueueModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
