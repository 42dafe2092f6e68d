import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Global, Inject, Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue } from 'bullmq';
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
export class QueueModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Queues');
  private lastErrorLog = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * A queue without an 'error' listener makes BullMQ print every failed reconnection to stderr with
   * console.error, several times a second while Redis is away. Connection errors are expected then (the outbox
   * keeps the work): they are logged once in a while instead.
   */
  onModuleInit(): void {
    for (const name of Object.values(QUEUES)) {
      this.moduleRef.get<Queue>(getQueueToken(name), { strict: false }).on('error', (error: Error) => {
        if (Date.now() - this.lastErrorLog < 30_000) return;
        this.lastErrorLog = Date.now();
        this.logger.warn(`queue ${name}: ${error.message}`);
      });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
