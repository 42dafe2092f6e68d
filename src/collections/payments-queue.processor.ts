import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { OutboxClaimer } from '../infra/queue/outbox-claimer';
import { QUEUES, SETTLE_PAYMENT_KEY, TOPICS } from '../infra/queue/queues';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PaymentSettlementService } from './payment-settlement.service';

/** Payments one claim takes: the settlement service's group size. */
const SETTLEMENT_GROUP = 100;

type PaymentsJob = { clientId: string; sessionId?: string; outboxId?: string };

/**
 * The payments work (worker role): settling payments with the operator, in groups claimed from the outbox (the
 * settlement service's group commit makes each group one read and one settlement call); and on the payments queue,
 * expiring checkout sessions. Work carries ids only; every handler reloads its record and acts only if it still
 * applies.
 */
@Processor(QUEUES.payments, { concurrency: 50 })
export class PaymentsProcessor extends OutboxJobProcessor<PaymentsJob> implements OnModuleInit {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly claimer: OutboxClaimer,
    private readonly settlement: PaymentSettlementService,
    private readonly sessions: CheckoutSessionsService,
  ) {
    super(QUEUES.payments, db, metrics);
  }

  onModuleInit(): void {
    this.claimer.handle(
      TOPICS.settlePayment,
      async (items) => {
        const paymentIds = items.map((item) => item.payload[SETTLE_PAYMENT_KEY]);
        const settled = await Promise.allSettled(paymentIds.map((id) => this.settlement.settle(id)));
        settled.forEach((s, i) => s.status === 'rejected' && this.logger.warn(`payment ${paymentIds[i]}: ${(s.reason as Error).message}`));
        return settled.map((s) => s.status === 'fulfilled');
      },
      { batch: SETTLEMENT_GROUP, held: 2 * SETTLEMENT_GROUP },
    );
  }

  async process(job: Job<PaymentsJob>): Promise<void> {
    switch (job.name) {
      case 'expire-checkout':
        return this.sessions.expire(job.data.clientId, job.data.sessionId!);
      default:
        throw new Error(`unknown payments job ${job.name}`);
    }
  }
}
