import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Doc } from '../../common/openapi/api-docs';
import { RailHealth } from '../../rails/rail-health';
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
    private readonly rails: RailHealth,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  @Doc('Liveness: the process serves HTTP')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * Postgres and Redis both answer. Without Redis we still accept requests, but report not ready. Each rail is
   * reported, but a rail that is down never makes the process unready: it still serves the other rails.
   */
  @Get('ready')
  @Doc(
    'Readiness: Postgres and Redis answer; each rail reported',
    '503 while Postgres or Redis is down. `rails` gives each rail: a real operator with its circuit (CLOSED, OPEN, HALF_OPEN) and last success, or the simulator; an open circuit does not make the process unready.',
  )
  @HealthCheck()
  ready() {
    return this.health.check([() => this.db.pingCheck('postgres', { timeout: 2000 }), () => this.redisCheck(), () => this.railsReport()]);
  }

  private async railsReport() {
    const indicator = this.indicators.check('rails');
    try {
      return indicator.up(Object.fromEntries((await this.rails.report()).map(({ rail, ...report }) => [rail, report])));
    } catch (error) {
      // Unreadable only with Postgres away, which the postgres check already reports.
      return indicator.up({ message: `rail state unreadable: ${(error as Error).message}` });
    }
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
