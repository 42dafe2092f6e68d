import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { formatAmount } from '../common/money';
import { NotificationsService } from '../notifications/notifications.service';
import { PAYOUT_STATUS, PayoutRow, resultOf } from './payout';

/**
 * Tells the world a payout's result, in the transaction that set it (so a crash can neither lose nor repeat it):
 * the signed callback to the request's callback_url (and, for a local payout, to the client's payouts callback URL
 * when one is set), and after a successful local payout an SMS to the recipient.
 */
@Injectable()
export class PayoutAnnouncer {
  constructor(
    private readonly callbacks: CallbacksService,
    private readonly notifications: NotificationsService,
  ) {}

  async announce(manager: EntityManager, payout: PayoutRow): Promise<void> {
    const { event, payload } = resultOf(payout);
    await this.callbacks.schedule(manager, {
      clientId: payout.client_id,
      kind: 'payouts',
      event,
      reference: payout.payout_reference,
      urls: [payout.callback_url],
      toClientEndpoint: payout.kind === 'LOCAL',
      payload,
    });

    if (payout.kind === 'LOCAL' && payout.status === PAYOUT_STATUS.SUCCESSFUL && payout.recipient_phone_number) {
      const [client] = await manager.query(`SELECT name FROM clients WHERE id = $1`, [payout.client_id]);
      await this.notifications.queueSms(manager, {
        clientId: payout.client_id,
        reference: payout.payout_reference,
        recipient: payout.recipient_phone_number,
        message:
          `${payout.request.recipient_first_name ?? 'Hello'}, you have received ${payout.currency} ${formatAmount(payout.amount)} ` +
          `from ${client.name}. Ref ${payout.rail_reference ?? payout.payout_reference}.`,
      });
    }
  }
}
