import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Doc } from '../../common/openapi/api-docs';
import { REDIS } from '../queue/queue.module';
import type { RedisClient } from '../queue/redis';
import { ReadinessReport, ReadinessReports } from './readiness-reports';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly reports: ReadinessReports,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  @Doc('Liveness: the process serves HTTP')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * Postgres and Redis both answer. Without Redis we still accept requests, but report not ready. The domains' reports
   * (each rail) are shown, but a rail that is down never makes the process unready: it still serves the other rails.
   */
  @Get('ready')
  @Doc(
    'Readiness: Postgres and Redis answer; each rail reported',
    '503 while Postgres or Redis is down. `rails` gives each rail: a real operator with its circuit (CLOSED, OPEN, HALF_OPEN) and last success, or the simulator; an open circuit does not make the process unready.',
  )
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.db.pingCheck('postgres', { timeout: 2000 }),
      () => this.redisCheck(),
      ...this.reports.entries().map(
        ([name, report]) =>
          () =>
            this.shown(name, report),
      ),
    ]);
  }

  private async shown(name: string, report: ReadinessReport) {
    const indicator = this.indicators.check(name);
    try {
      return indicator.up(await report());
    } catch (error) {
      // Unreadable only with Postgres away, which the postgres check already reports.
      return indicator.up({ message: `${name} unreadable: ${(error as Error).message}` });
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
