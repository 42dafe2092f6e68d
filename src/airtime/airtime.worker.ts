import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { settleBounded } from '../common/settle-bounded';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ClaimedItem, OutboxClaimer } from '../infra/queue/outbox-claimer';
import { TOPICS } from '../infra/queue/queues';
import { scheduleReconciliation } from '../infra/queue/reconciliation';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeReconciliationService } from './airtime-reconciliation.service';

/**
 * Slices a worker works on at once (RECIPIENTS_PER_JOB recipients each), over all requests: a 1,000-recipient request
 * takes at most this many, and the next claim takes the oldest due slices of any merchant's request.
 */
const SLICES_HELD = 16;
/** Slices of one request in flight at once: a big request leaves room to the other merchants' slices. */
const SLICES_PER_REQUEST = 4;

/**
 * The worker side of bulk airtime: slices of accepted requests claimed from the outbox and topped up in parallel,
 * bounded per request; answers about single recipients (operator callbacks, status queries) booked in groups; and in
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
    this.claimer.handle(TOPICS.processAirtime, (items) => this.processSlices(items), { batch: SLICES_HELD, held: SLICES_HELD });
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

  /** The slices of each request in parallel, SLICES_PER_REQUEST at a time; a slice that failed is tried again. */
  private async processSlices(items: ClaimedItem[]): Promise<boolean[]> {
    const byRequest = new Map<string, ClaimedItem[]>();
    for (const item of items) byRequest.set(item.payload.requestId, [...(byRequest.get(item.payload.requestId) ?? []), item]);
    const done = new Map<ClaimedItem, boolean>();
    await Promise.all(
      [...byRequest.values()].map(async (slices) => {
        const results = await settleBounded(slices, SLICES_PER_REQUEST, (slice) =>
          this.processing.process(slice.payload.requestId, Number(slice.payload.first), Number(slice.payload.last)),
        );
        results.forEach((result, i) => {
          if (result.status === 'rejected') this.logger.warn(`airtime slice ${slices[i].outboxId}: ${(result.reason as Error).message}`);
          done.set(slices[i], result.status === 'fulfilled');
        });
      }),
    );
    return items.map((item) => done.get(item)!);
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
