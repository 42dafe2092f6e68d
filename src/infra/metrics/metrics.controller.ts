import { Controller, Get, Headers, Inject, NotFoundException, Res, UnauthorizedException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EngineMetrics } from './engine-metrics';

/**
 * Prometheus scrape endpoint. With METRICS_TOKEN set it requires `Authorization: Bearer <token>`; without one it
 * is open in sandbox and not served in production.
 */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: EngineMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  scrape(@Res({ passthrough: true }) reply: FastifyReply, @Headers('authorization') authorization?: string): Promise<string> {
    const token = this.config.metricsToken;
    if (token === null) {
      if (!this.config.isSandbox) throw new NotFoundException();
    } else {
      const expected = Buffer.from(`Bearer ${token}`);
      const given = Buffer.from(authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthorizedException();
    }
    // Set here, not by decorator: a refusal must keep its JSON body.
    void reply.header('content-type', 'text/plain; version=0.0.4');
    return this.metrics.registry.metrics();
  }
}
