import { ExecutionContext, HttpException, HttpStatus, Injectable, Module } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { isGatewayRoute } from '../../common/errors/http-error.filter';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { REDIS } from '../queue/queue.module';
import { redisNamespace } from '../queue/redis';
import { RedisThrottlerStorage } from './redis-throttler.storage';
import { SIGN_IN_CREDENTIAL } from './sign-in-throttle';

const MINUTE_MS = 60_000;

function signInField(reflector: Reflector, context: ExecutionContext): string | undefined {
  return reflector.get<string | undefined>(SIGN_IN_CREDENTIAL, context.getHandler());
}

function credential(request: FastifyRequest, field: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

/** Keys never hold a token itself, only a digest of it. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** Answers 429 with a standard Retry-After, in the interface's error shape (via the global filter). */
@Injectable()
class PaygateThrottlerGuard extends ThrottlerGuard {
  protected async throwThrottlingException(context: ExecutionContext, detail: { timeToBlockExpire: number }): Promise<void> {
    const seconds = Math.max(1, detail.timeToBlockExpire);
    void context.switchToHttp().getResponse<FastifyReply>().header('retry-after', String(seconds));
    throw new HttpException(`Too many requests; retry after ${seconds} seconds`, HttpStatus.TOO_MANY_REQUESTS);
  }
}

/**
 * Rate limits (issue 11 §4), counted in Redis across api processes:
 * - sign-in routes (@SignInThrottle): LOGIN_RATE_LIMIT_PER_MINUTE attempts per credential and
 *   LOGIN_IP_RATE_LIMIT_PER_MINUTE per client address, each blocking for a minute once exceeded;
 * - the gateway: GATEWAY_RATE_LIMIT_PER_MINUTE requests per access token (per client address before one).
 * The client address is the socket's, or X-Forwarded-For's from TRUSTED_PROXIES only (see createHttpAdapter).
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, REDIS, Reflector],
      useFactory: (config: AppConfig, redis: Redis, reflector: Reflector) => ({
        storage: new RedisThrottlerStorage(redis, redisNamespace(config.databaseUrl, 'throttle')),
        setHeaders: false,
        throttlers: [
          {
            name: 'sign-in-credential',
            ttl: MINUTE_MS,
            blockDuration: MINUTE_MS,
            limit: config.loginRateLimitPerMinute,
            // A body without the credential signs nobody in (it gets its 4xx); only the per-address limit counts it.
            skipIf: (context) => {
              const field = signInField(reflector, context);
              return !field || credential(context.switchToHttp().getRequest<FastifyRequest>(), field) === '';
            },
            getTracker: (request, context) =>
              `${signInField(reflector, context)}:${credential(request as FastifyRequest, signInField(reflector, context)!)}`,
          },
          {
            name: 'sign-in-address',
            ttl: MINUTE_MS,
            blockDuration: MINUTE_MS,
            limit: config.loginIpRateLimitPerMinute,
            skipIf: (context) => !signInField(reflector, context),
            getTracker: (request) => (request as FastifyRequest).ip,
          },
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
