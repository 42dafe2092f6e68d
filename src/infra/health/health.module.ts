import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { ReadinessReports } from './readiness-reports';

@Global()
@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [ReadinessReports], exports: [ReadinessReports] })
export class HealthModule {}
