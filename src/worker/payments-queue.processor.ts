import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { CheckoutService } from '../checkout/checkout.service';
import { CollectionReversalsService } from '../reversals/collection-reversals.service';
import { PaymentSettlementService } from '../payments/payment-settlement.service';

type PaymentsJob = { paymentId?: string; sessionId?: string; reversalId?: string; outboxId?: string };

/**
 * The payments queue: settling payments with the operator, expiring checkout sessions, processing collection
 * reversals. Jobs carry ids only; every handler reloads its record and acts only if it still applies.
 */
@Processor(QUEUES.payments, { concurrency: 20 })
export class PaymentsProcessor extends OutboxJobProcessor<PaymentsJob> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly settlement: PaymentSettlementService,
    private readonly checkout: CheckoutService,
    private readonly reversals: CollectionReversalsService,
  ) {
    super(QUEUES.payments, db, metrics);
  }

  async process(job: Job<PaymentsJob>): Promise<void> {
    switch (job.name) {
      case 'settle':
        return this.settlement.settle(job.data.paymentId!);
      case 'expire-checkout':
        return this.checkout.expire(job.data.sessionId!);
      case 'reverse':
        return this.reversals.advance(job.data.reversalId!);
      default:
        throw new Error(`unknown payments job ${job.name}`);
    }
  }
}
