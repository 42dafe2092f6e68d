import { ExecutionContext, Injectable, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { isGatewayRoute } from '../../common/errors/http-error.filter';
import { TooManyRequests } from '../../common/errors/too-many-requests';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { REDIS } from '../queue/queue.module';
import { RedisClient, redisNamespace } from '../queue/redis';
import { RedisThrottlerStorage } from './redis-throttler.storage';

const MINUTE_MS = 60_000;

/** Keys never hold a token itself, only a digest of it. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** Answers 429 with a standard Retry-After, in the interface's error shape (via the route's filter). */
@Injectable()
class PaygateThrottlerGuard extends ThrottlerGuard {
  protected async throwThrottlingException(_context: ExecutionContext, detail: { timeToBlockExpire: number }): Promise<void> {
    throw new TooManyRequests(Math.max(1, detail.timeToBlockExpire));
  }
}

/**
 * The gateway's request rate (issue 11 §4), counted in Redis across api processes: GATEWAY_RATE_LIMIT_PER_MINUTE
 * requests per access token (per client address before one). The client address is the socket's, or
 * X-Forwarded-For's from TRUSTED_PROXIES only (see createHttpAdapter). Sign-ins have their own throttle
 * (SignInAttempts, src/auth/).
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, REDIS],
      useFactory: (config: AppConfig, redis: RedisClient) => ({
        storage: new RedisThrottlerStorage(redis, redisNamespace(config.databaseUrl, 'throttle')),
        setHeaders: false,
        throttlers: [
          {
            name: 'gateway',
            ttl: MINUTE_MS,
            limit: config.gatewayRateLimitPerMinute,
            skipIf: (context) => !isGatewayRoute(context.switchToHttp().getRequest<FastifyRequest>().url),
            getTracker: (request) => {
              const token = (request as FastifyRequest).headers['x-access-token'];
              return typeof token === 'string' && token ? `token:${digest(token)}` : `ip:${(request as FastifyRequest).ip}`;
            },
          },
        ],
      }),
    }),
  ],
  providers: [{ provide: APP_GUARD, useClass: PaygateThrottlerGuard }],
})
export class ThrottlingModule {}
