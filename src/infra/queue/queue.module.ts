import { BullModule } from '@nestjs/bullmq';
import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { OutboxService } from './outbox.service';
import { QUEUES } from './queues';
import { createRedis } from './redis';

export const REDIS = Symbol('REDIS');

const retry = (attempt: number) => Math.min(attempt * 200, 5000);

const queueLogger = new Logger('Queues');
let lastErrorLog = 0;

/**
 * BullMQ prints an 'error' that nothing listens to with console.error, a stack per failed connection attempt, and
 * a queue connects as soon as it is made: each queue listens from its construction. Connection errors are expected
 * while Redis is away (the outbox keeps the work), so one line is logged once in a while instead.
 */
class ListenedQueue extends Queue {
  constructor(...args: ConstructorParameters<typeof Queue>) {
    super(...args);
    this.on('error', (error: Error) => {
      if (Date.now() - lastErrorLog < 30_000) return;
      lastErrorLog = Date.now();
      queueLogger.warn(`queue ${this.name}: ${error.message}`);
    });
  }
}
BullModule.queueClass = ListenedQueue;

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
