import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbacksService } from '../callbacks/callbacks.service';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';

/**
 * The one owner of a payment's state after it is recorded: every status change goes through here, inside the
 * caller's transaction, together with its announcement — the payment callbacks of a direct charge, or the
 * session's move (and checkout callback) for a payment of a hosted checkout. The operator's results are the
 * exception: PaymentSettlementService writes them, announcements included, in one SQL call per batch.
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly sessions: CheckoutSessionsService,
    private readonly outbox: OutboxService,
    private readonly callbacks: CallbacksService,
  ) {}

  /** Asks the worker to settle the payment with the operator once `delayMs` has passed. */
  async scheduleSettlement(manager: EntityManager, paymentId: string, delayMs: number): Promise<void> {
    await this.outbox.enqueue(manager, TOPICS.settlePayment, { paymentId }, new Date(Date.now() + delayMs));
  }

  /** The payer proved the OTP: the charge goes to the operator now. */
  async otpVerified(manager: EntityManager, payment: PaymentRow): Promise<void> {
    await this.payments.markOtpVerified(manager, payment.id);
    await this.scheduleSettlement(manager, payment.id, 0);
  }

  async otpRejected(manager: EntityManager, payment: PaymentRow, failures: number): Promise<void> {
    await this.payments.recordOtpFailures(manager, payment.id, failures);
  }

  /** The OTP limit failed a direct charge. Final; the callback carries the stored settlement time. */
  async fail(manager: EntityManager, payment: PaymentRow): Promise<void> {
    const settledAt = await this.payments.markFailed(manager, payment.id);
    await this.announce(manager, { ...payment, payment_status: PAYMENT_STATUS.FAILED, settled_at: settledAt });
  }

  /** A reversal refunded the payer; the reversal reports itself, a checkout session follows. */
  async reverse(manager: EntityManager, payment: PaymentRow): Promise<void> {
    await this.payments.setStatus(manager, payment.id, PAYMENT_STATUS.REVERSED);
    if (payment.checkout_session_id) await this.sessions.onPaymentReversed(manager, payment.checkout_session_id);
  }

  /** A direct charge's callback: to the request's URL and, when it asked to notify, to the client's endpoint. */
  private async announce(manager: EntityManager, payment: PaymentRow): Promise<void> {
    const result = paymentResult(payment);
    await this.callbacks.schedule(manager, {
      clientId: payment.client_id,
      kind: 'collections',
      event: result.event,
      reference: payment.external_reference,
      urls: [payment.callback_url],
      toClientEndpoint: payment.notify_client || payment.notify_originator,
      payload: result,
    });
  }
}
