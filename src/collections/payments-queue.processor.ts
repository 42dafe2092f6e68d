import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { OutboxWorkers, rowByRow } from '../infra/queue/outbox-workers';
import { SETTLE_PAYMENT_KEY, TOPICS } from '../infra/queue/queues';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PaymentSettlementService } from './payment-settlement.service';

/**
 * The payments work (worker role), in groups of BullMQ jobs relayed from the outbox: settling payments with the
 * operator (the settlement service's group commit makes each group one read and one settlement call), and expiring
 * checkout sessions. Work carries ids only; every handler reloads its record and acts only if it still applies.
 */
@Injectable()
export class PaymentsProcessor implements OnModuleInit {
  private readonly logger = new Logger(PaymentsProcessor.name);

  constructor(
    private readonly workers: OutboxWorkers,
    private readonly settlement: PaymentSettlementService,
    private readonly sessions: CheckoutSessionsService,
  ) {}

  onModuleInit(): void {
    this.workers.handle(
      TOPICS.settlePayment,
      rowByRow(this.logger, (item) => this.settlement.settle(item.payload[SETTLE_PAYMENT_KEY])),
    );
    this.workers.handle(
      TOPICS.expireCheckout,
      rowByRow(this.logger, (item, clientId) => this.sessions.expire(clientId, item.payload.sessionId)),
    );
  }
}
