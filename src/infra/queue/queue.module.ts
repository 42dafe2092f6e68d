import { BullModule } from '@nestjs/bullmq';
import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { ConnectionOptions, DefaultJobOptions, Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { OutboxService } from './outbox.service';
import { ALL_QUEUES } from './queues';
import { createRedis, queuePrefix, type RedisClient, reconnectDelay } from './redis';

export const REDIS = Symbol('REDIS');

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

  async close(): Promise<void> {
    await super.close();
    // BullMQ leaves open a client it was given: a cluster client is made for this queue alone (queueConnection).
    if (this.opts.connection instanceof Cluster) this.opts.connection.disconnect();
  }
}
BullModule.queueClass = ListenedQueue;

/**
 * How long (seconds) an idle worker's blocking wait lasts before it asks again; BullMQ's default is 5. A new job or
 * a delayed one falling due ends the wait at once (BullMQ's marker), so a longer wait only makes idle quieter; 10 is
 * the ceiling BullMQ itself keeps for a wait on Redis (a longer BZPOPMIN risks a lost wake-up across a reconnection).
 */
const IDLE_WAIT_S = 10;

/**
 * A worker runs on its queue's connection (OutboxWorkers). A queue's cluster client is the queue's own and Nest closes
 * the queue before the workers, so a worker on a cluster works on a duplicate of its own, closed with it.
 */
export class OwnClientWorker extends Worker {
  private readonly ownClient: Cluster | null;

  constructor(name: string, processor: Processor, opts: WorkerOptions) {
    const own = opts.connection instanceof Cluster ? opts.connection.duplicate() : null;
    super(name, processor, { drainDelay: IDLE_WAIT_S, ...opts, ...(own ? { connection: own } : {}) });
    this.ownClient = own;
  }

  async close(force?: boolean): Promise<void> {
    await super.close(force);
    this.ownClient?.disconnect();
  }
}

/**
 * A queue's connection, which fails fast while Redis is away. On one server BullMQ makes (and closes) it from these
 * options; BullMQ cannot make a cluster client, so on a cluster it is given one.
 */
function queueConnection(config: AppConfig): ConnectionOptions {
  if (config.redisClusterNodes) return createRedis(config, { enableOfflineQueue: false });
  return { url: config.redisUrl, maxRetriesPerRequest: null, enableOfflineQueue: false, retryStrategy: reconnectDelay };
}

const JOB_DEFAULTS: DefaultJobOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 24 * 3600, count: 50_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * The shared Redis connection (health, metrics, rate limits, statement page starts), BullMQ's configuration and its
 * queues, whose workers run on the queue's connection options. Producers fail fast while Redis is away (the outbox
 * keeps the work).
 */
@Global()
@Module({
  imports: [
    ...ALL_QUEUES.map((name) =>
      BullModule.registerQueueAsync({
        name,
        inject: [APP_CONFIG],
        useFactory: (config: AppConfig) => ({
          connection: queueConnection(config),
          prefix: queuePrefix(config, name),
          defaultJobOptions: JOB_DEFAULTS,
        }),
      }),
    ),
  ],
  providers: [OutboxService, { provide: REDIS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createRedis(config) }],
  exports: [REDIS, BullModule, OutboxService],
})
export class QueueModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
