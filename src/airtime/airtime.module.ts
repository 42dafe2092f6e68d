import { Module, OnModuleInit } from '@nestjs/common';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { FloatModule } from '../float/float.module';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeReconciliationService } from './airtime-reconciliation.service';
import { AirtimeController } from './airtime.controller';
import { AirtimeRepository, OLDEST_UNRESOLVED_TOP_UP_SQL } from './airtime.repository';
import { AirtimeService } from './airtime.service';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { ClientsModule } from '../clients/clients.module';
import { RailsModule } from '../rails/rails.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Bulk airtime: acceptance, per-recipient processing, reconciliation and status (disbursement document "Airtime"). */
@Module({
  imports: [FloatModule, CallbacksModule, ClientsModule, RailsModule, GatewayAuthModule],
  controllers: [AirtimeController],
  providers: [AirtimeService, AirtimeProcessingService, AirtimeReconciliationService, AirtimeRepository],
  exports: [AirtimeProcessingService, AirtimeReconciliationService],
})
export class AirtimeModule implements OnModuleInit {
  constructor(private readonly metrics: EngineMetrics) {}

  /** Rail health in /metrics: the oldest top-up still waiting for the provider. */
  onModuleInit(): void {
    this.metrics.addRailWait('airtime', OLDEST_UNRESOLVED_TOP_UP_SQL);
  }
}
