import { Module, OnModuleInit } from '@nestjs/common';
import { AirtimeModule } from '../airtime/airtime.module';
import { CollectionReversalsModule } from '../collection-reversals/collection-reversals.module';
import { CollectionsModule } from '../collections/collections.module';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { PayoutsModule } from '../payouts/payouts.module';
import { RailsModule } from '../rails/rails.module';
import { SANDBOX_BALANCES, type SandboxBalances } from '../rails/sandbox-statement';
import { OurMovementsRepository } from './our-movements.repository';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';
import { SandboxFloat } from './sandbox-float';

/** Reconciliation against the operators: runs, their rows, the resolutions of differences (docs/rails.md). */
@Module({
  imports: [RailsModule, CollectionsModule, CollectionReversalsModule, PayoutsModule, AirtimeModule],
  providers: [
    OurMovementsRepository,
    ReconciliationRepository,
    ReconciliationService,
    SandboxFloat,
    {
      provide: SANDBOX_BALANCES,
      inject: [SandboxFloat],
      useFactory:
        (float: SandboxFloat): SandboxBalances =>
        (rail) =>
          float.balance(rail),
    },
  ],
  exports: [ReconciliationRepository, ReconciliationService],
})
export class ReconciliationModule implements OnModuleInit {
  constructor(
    private readonly metrics: EngineMetrics,
    private readonly runs: ReconciliationRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.addGauge('paygate_recon_open_exceptions', 'Reconciliation differences still open, per rail', ['rail'], async () =>
      (await this.runs.openPerRail()).map((row) => ({ labels: { rail: row.rail }, value: row.open })),
    );
    this.metrics.addCounter(
      'paygate_recon_rows_total',
      "Rows found by reconciliation runs against the operators' statements, per rail and outcome",
      ['rail', 'outcome'],
      async () => (await this.runs.rowsPerOutcome()).map((row) => ({ labels: { rail: row.rail, outcome: row.outcome }, value: row.rows })),
    );
  }
}
