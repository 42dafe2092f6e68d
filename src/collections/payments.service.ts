import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { OutboxService } from '../infra/queue/outbox.service';
import { settlePaymentJob, TOPICS } from '../infra/queue/queues';
import { CheckoutSessionsService } from './checkout-sessions.service';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';

/**
 * The one owner of a payment's state after it is recorded: every status change goes through here, inside the
 * caller's transaction, together with its announcement — the payment callbacks of a direct charge, or the
 * session's move (and checkout callback) for a payment of a hosted checkout. The operator's results are the
 * exception: PaymentSettlementService writes them, announcements included, in one SQL call per batch (the same SQL
 * functions announce: collection_payment_announce, checkout_follow_payments).
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly sessions: CheckoutSessionsService,
    private readonly outbox: OutboxService,
  ) {}

  /** Asks the worker to settle the payment with the operator once `delayMs` has passed. */
  async scheduleSettlement(manager: EntityManager, clientId: string, paymentId: string, delayMs: number): Promise<void> {
    await this.outbox.enqueue(manager, clientId, TOPICS.settlePayment, settlePaymentJob(paymentId), new Date(Date.now() + delayMs));
  }

  /** The payer proved the OTP: the charge goes to the operator now. */
  async otpVerified(manager: EntityManager, payment: PaymentRow): Promise<void> {
    await this.payments.markOtpVerified(manager, payment.client_id, payment.id);
    await this.scheduleSettlement(manager, payment.client_id, payment.id, 0);
  }

  async otpRejected(manager: EntityManager, payment: PaymentRow, failures: number): Promise<void> {
    await this.payments.recordOtpFailures(manager, payment.client_id, payment.id, failures);
  }

  /** The OTP limit failed a direct charge. Final; the callback carries the stored settlement time. */
  async fail(manager: EntityManager, payment: PaymentRow): Promise<void> {
    const settledAt = await this.payments.markFailed(manager, payment.client_id, payment.id);
    await this.announce(manager, { ...payment, payment_status: PAYMENT_STATUS.FAILED, settled_at: settledAt });
  }

  /** A reversal refunded the payer; the reversal reports itself, a checkout session follows. */
  async reverse(manager: EntityManager, payment: PaymentRow): Promise<void> {
    await this.payments.setStatus(manager, payment.client_id, payment.id, PAYMENT_STATUS.REVERSED);
    if (payment.checkout_session_id) await this.sessions.onPaymentReversed(manager, payment.client_id, payment.checkout_session_id);
  }

  /**
   * collection_payment_announce (src/collections/sql/collection_payment_announce.sql): a direct charge's result callback,
   * to whom the settlement's SQL sends it too.
   */
  private async announce(manager: EntityManager, payment: PaymentRow): Promise<void> {
    await runPrepared(manager, ANNOUNCE, [
      payment.client_id,
      payment.external_reference,
      payment.callback_url,
      payment.notify_client || payment.notify_originator,
      paymentResult(payment),
    ]);
  }
}

const ANNOUNCE: PreparedStatement = {
  name: 'collection_payment_announce',
  text: `SELECT collection_payment_announce(p_client_id => $1, p_external_reference => $2, p_callback_url => $3, p_notify => $4,
           p_payload => $5)`,
};
