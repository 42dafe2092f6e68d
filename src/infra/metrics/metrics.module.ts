import { Global, Module } from '@nestjs/common';
import { EngineMetrics } from './engine-metrics';

@Global()
@Module({ providers: [EngineMetrics], exports: [EngineMetrics] })
export class MetricsModule {}
