import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { OutboxWorkers } from '../infra/queue/outbox-workers';
import { TOPICS } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeReconciliationService } from './airtime-reconciliation.service';

/**
 * The worker side of bulk airtime: groups of slices of accepted requests (BullMQ jobs relayed from the outbox, LANES),
 * topped up and booked together; answers about single recipients (operator callbacks, status queries) booked in groups; and in
 * every worker the reconciliation pass over recipients left processing or jammed.
 */
@Injectable()
export class AirtimeWorker implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AirtimeWorker.name);
  private stopReconciling: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workers: OutboxWorkers,
    private readonly processing: AirtimeProcessingService,
    private readonly reconciliation: AirtimeReconciliationService,
  ) {}

  onModuleInit(): void {
    this.workers.handle(TOPICS.processAirtime, (items, clientId) =>
      this.processing.process(
        clientId,
        items.map((item) => ({ requestId: item.payload.requestId, first: Number(item.payload.first), last: Number(item.payload.last) })),
      ),
    );
    // A rail's answer about one recipient arrived (operator callback or status query); booked as reconciliation would.
    this.workers.handle(TOPICS.recheckAirtime, async (items) => {
      await this.processing.recheck(items.map((item) => item.payload.recipientId));
      return items.map(() => true);
    });
  }

  onApplicationBootstrap(): void {
    this.stopReconciling = scheduleReconciliation(
      this.logger,
      'airtime recipient(s)',
      this.config.payoutReconcileAfterMs,
      () => this.reconciliation.reconcile(),
      () => this.reconciliation.nextDue(),
    );
  }

  onApplicationShutdown(): void {
    this.stopReconciling?.();
  }
}
