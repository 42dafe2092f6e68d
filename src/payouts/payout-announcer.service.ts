import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { displayAmount } from '../common/money';
import { NotificationsService } from '../notifications/notifications.service';
import { PAYOUT_STATUS, PayoutRow, resultOf } from './payout';

/**
 * Tells the world payouts' results, in the transaction that set them (so a crash can neither lose nor repeat them):
 * the signed callback to each request's callback_url (and, for a local payout, to the client's payouts callback URL
 * when one is set), and after a successful local payout an SMS to the recipient. A group's callbacks are one
 * statement, its SMS another.
 */
@Injectable()
export class PayoutAnnouncer {
  constructor(
    private readonly callbacks: CallbacksService,
    private readonly notifications: NotificationsService,
  ) {}

  async announce(manager: EntityManager, payouts: PayoutRow[]): Promise<void> {
    await this.callbacks.schedule(
      manager,
      ...payouts.map((payout) => {
        const { event, payload } = resultOf(payout);
        return {
          clientId: payout.client_id,
          kind: 'payouts' as const,
          event,
          reference: payout.payout_reference,
          urls: [payout.callback_url],
          toClientEndpoint: payout.kind === 'LOCAL',
          payload,
        };
      }),
    );

    const paidToPhones = payouts.filter((p) => p.kind === 'LOCAL' && p.status === PAYOUT_STATUS.SUCCESSFUL && p.recipient_phone_number);
    if (paidToPhones.length === 0) return;
    const clientIds = [...new Set(paidToPhones.map((p) => p.client_id))];
    const names = new Map<string, string>(
      (await manager.query(`SELECT id, name FROM clients WHERE id = ANY($1::uuid[])`, [clientIds])).map(
        (c: { id: string; name: string }) => [c.id, c.name],
      ),
    );
    await this.notifications.queueSms(
      manager,
      paidToPhones.map((payout) => ({
        clientId: payout.client_id,
        reference: payout.payout_reference,
        recipient: payout.recipient_phone_number!,
        message:
          `${payout.request.recipient_first_name ?? 'Hello'}, you have received ${payout.currency} ${displayAmount(payout.amount, payout.currency)} ` +
          `from ${names.get(payout.client_id)}. Ref ${payout.rail_reference ?? payout.payout_reference}.`,
      })),
    );
  }
}
