import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PaymentSettlementService } from './payment-settlement.service';
import { CollectionReversalsService } from '../collection-reversals/collection-reversals.service';

type PaymentsJob = { paymentId?: string; sessionId?: string; reversalId?: string; outboxId?: string };

/**
 * The payments queue (worker role): settling payments with the operator and expiring checkout sessions (the
 * payments core), processing collection reversals (reversals). Jobs carry ids only; every handler reloads its
 * record and acts only if it still applies.
 */
@Processor(QUEUES.payments, { concurrency: 50 })
export class PaymentsProcessor extends OutboxJobProcessor<PaymentsJob> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly settlement: PaymentSettlementService,
    private readonly sessions: CheckoutSessionsService,
    private readonly reversals: CollectionReversalsService,
  ) {
    super(QUEUES.payments, db, metrics);
  }

  async process(job: Job<PaymentsJob>): Promise<void> {
    switch (job.name) {
      case 'settle':
        return this.settlement.settle(job.data.paymentId!);
      case 'expire-checkout':
        return this.sessions.expire(job.data.sessionId!);
      case 'reverse':
        return this.reversals.advance(job.data.reversalId!);
      default:
        throw new Error(`unknown payments job ${job.name}`);
    }
  }
}
