import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CallbacksService } from '../callbacks/callbacks.service';
import { CHECKOUT_STATUS, checkoutResult, CheckoutSessionRow, paidAmount, SELECT_CHECKOUT } from './checkout-session';
import { PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';

/**
 * The status of a hosted-checkout session, which its payments drive: it follows each payment reversal, expires
 * when unpaid at its end, and each move is announced to the merchant in the checkout shape. It follows its
 * payments' operator results in the settlement's SQL (checkout_follow_payments, migration
 * CheckoutSettlementOneCall), with the same rules and callback. Opening sessions and the payer's page belong to
 * checkout/.
 */
@Injectable()
export class CheckoutSessionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly payments: PaymentsRepository,
    private readonly callbacks: CallbacksService,
  ) {}

  /** The payer started a payment: one at a time per session. */
  async startPayment(manager: EntityManager, sessionId: string): Promise<void> {
    await manager.query(`UPDATE checkout_sessions SET status = $2, updated_at = now() WHERE id = $1`, [
      sessionId,
      CHECKOUT_STATUS.PROCESSING,
    ]);
  }

  /** A reversed payment turns its session to 840 once none of its payments stands; until then it is part paid. */
  async onPaymentReversed(manager: EntityManager, sessionId: string): Promise<void> {
    const session = (await this.lock(manager, sessionId))!;
    const payments = await this.payments.ofSession(manager, sessionId);
    const status = paidAmount(payments).gt(0) ? CHECKOUT_STATUS.PART_PAID : CHECKOUT_STATUS.REVERSED;
    await this.moveTo(manager, { ...session, status }, payments, true);
  }

  /** The scheduled end of a session (worker): unpaid and idle sessions expire (820). */
  async expire(sessionId: string): Promise<void> {
    await this.db.transaction(async (manager) => {
      const session = await this.lock(manager, sessionId);
      if (!session || session.status !== CHECKOUT_STATUS.UNPAID || new Date(session.expires_at) > new Date()) return;
      await this.moveTo(manager, { ...session, status: CHECKOUT_STATUS.EXPIRED }, await this.payments.ofSession(manager, sessionId), true);
    });
  }

  private async lock(manager: EntityManager, sessionId: string): Promise<CheckoutSessionRow | undefined> {
    const [session]: CheckoutSessionRow[] = await manager.query(`${SELECT_CHECKOUT} WHERE cs.id = $1 FOR UPDATE OF cs`, [sessionId]);
    return session;
  }

  private async moveTo(manager: EntityManager, session: CheckoutSessionRow, payments: PaymentRow[], notify: boolean): Promise<void> {
    await manager.query(`UPDATE checkout_sessions SET status = $2, updated_at = now() WHERE id = $1`, [session.id, session.status]);
    if (!notify) return;
    await this.callbacks.schedule(manager, {
      clientId: session.client_id,
      kind: 'collections',
      event: `checkout_${session.status}`,
      reference: session.merchant_transaction_id,
      urls: [session.callback_url],
      payload: checkoutResult(session, payments),
    });
  }
}
