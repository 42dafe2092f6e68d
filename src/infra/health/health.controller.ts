import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Doc } from '../../common/openapi/api-docs';
import { REDIS } from '../queue/queue.module';
import type { RedisClient } from '../queue/redis';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  @Doc('Liveness: the process serves HTTP')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Postgres and Redis both answer. Without Redis we still accept requests, but report not ready. */
  @Get('ready')
  @Doc('Readiness: Postgres and Redis answer', '503 while either is down.')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.db.pingCheck('postgres', { timeout: 2000 }), () => this.redisCheck()]);
  }

  private async redisCheck() {
    const indicator = this.indicators.check('redis');
    if (this.redis.status !== 'ready') return indicator.down({ message: `connection is ${this.redis.status}` });
    try {
      await Promise.race([this.redis.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('ping timed out')), 1000))]);
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }
}
