import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CHECKOUT_STATUS, followCheckoutSessions } from './checkout-session';

/**
 * The status of a hosted-checkout session, which its payments drive. Its rules, and the checkout callback of each
 * move, are one SQL function, checkout_follow_payments: the settlement calls it for the payments' results, and this
 * service for a payment reversed and for the session's end. Opening sessions and the payer's page belong to checkout/.
 */
@Injectable()
export class CheckoutSessionsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The payer started a payment: one at a time per session. */
  async startPayment(manager: EntityManager, clientId: string, sessionId: string): Promise<void> {
    await manager.query(`UPDATE checkout_sessions SET status = $3, updated_at = now() WHERE client_id = $1 AND id = $2`, [
      clientId,
      sessionId,
      CHECKOUT_STATUS.PROCESSING,
    ]);
  }

  /** A reversed payment turns its session to 840 once none of its payments stands; until then it is part paid. */
  async onPaymentReversed(manager: EntityManager, clientId: string, sessionId: string): Promise<void> {
    await followCheckoutSessions(manager, clientId, [sessionId], 'REVERSAL');
  }

  /** The scheduled end of a session (worker): unpaid and idle sessions expire (820). */
  async expire(clientId: string, sessionId: string): Promise<void> {
    await followCheckoutSessions(this.db, clientId, [sessionId], 'EXPIRY');
  }
}
