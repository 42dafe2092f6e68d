import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { OutboxClaimer } from '../infra/queue/outbox-claimer';
import { TOPICS } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeReconciliationService } from './airtime-reconciliation.service';

/**
 * Slices one claim takes (RECIPIENTS_PER_JOB recipients each, of any requests), booked as one group: a 1,000-recipient
 * request is one group, and the next claim takes the oldest due slices of any merchant's request.
 */
const SLICES_PER_GROUP = 20;

/**
 * The worker side of bulk airtime: groups of slices of accepted requests claimed from the outbox, topped up and
 * booked together (two groups per worker at once); answers about single recipients (operator callbacks, status queries) booked in groups; and in
 * every worker the reconciliation pass over recipients left processing or jammed.
 */
@Injectable()
export class AirtimeWorker implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AirtimeWorker.name);
  private stopReconciling: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly claimer: OutboxClaimer,
    private readonly processing: AirtimeProcessingService,
    private readonly reconciliation: AirtimeReconciliationService,
  ) {}

  onModuleInit(): void {
    this.claimer.handle(
      TOPICS.processAirtime,
      (items) =>
        this.processing.process(
          items.map((item) => ({ requestId: item.payload.requestId, first: Number(item.payload.first), last: Number(item.payload.last) })),
        ),
      { batch: SLICES_PER_GROUP, held: 2 * SLICES_PER_GROUP },
    );
    // A rail's answer about one recipient arrived (operator callback or status query); booked as reconciliation would.
    this.claimer.handle(
      TOPICS.recheckAirtime,
      async (items) => {
        await this.processing.recheck(items.map((item) => item.payload.recipientId));
        return items.map(() => true);
      },
      { batch: 100, held: 200 },
    );
  }

  onApplicationBootstrap(): void {
    this.stopReconciling = scheduleReconciliation(this.logger, 'airtime recipient(s)', this.config.payoutReconcileAfterMs, () =>
      this.reconciliation.reconcile(),
    );
  }

  onApplicationShutdown(): void {
    this.stopReconciling?.();
  }
}
