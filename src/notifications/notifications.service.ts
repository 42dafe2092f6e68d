import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { SMS_NOTIFIER, type SmsNotifier } from './sms-notifier';

export interface NotificationView {
  reference: string;
  channel: 'SMS';
  recipient: string;
  message: string;
  status: 'QUEUED' | 'SENT' | 'FAILED';
  provider_reference: string | null;
  created_at: string;
  sent_at: string | null;
}

/**
 * Messages to recipients (SMS after a local payout). A message is written in the transaction of the state change
 * that causes it, with its sending job (outbox): one per client, reference and channel, never lost.
 */
@Injectable()
export class NotificationsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(SMS_NOTIFIER) private readonly sms: SmsNotifier,
    private readonly outbox: OutboxService,
  ) {}

  async queueSms(manager: EntityManager, n: { clientId: string; reference: string; recipient: string; message: string }): Promise<void> {
    const [row] = await manager.query(
      `INSERT INTO notifications (client_id, reference, channel, recipient, message) VALUES ($1, $2, 'SMS', $3, $4)
       ON CONFLICT (client_id, reference, channel) DO NOTHING RETURNING id`,
      [n.clientId, n.reference, n.recipient, n.message],
    );
    if (row) await this.outbox.enqueue(manager, TOPICS.sendNotification, { notificationId: String(row.id) });
  }

  /** The sending job: a queued message goes to the gateway once (keyed by its id) and is marked sent. */
  async send(notificationId: string): Promise<void> {
    const [n] = await this.db.query(`SELECT id, recipient, message FROM notifications WHERE id = $1 AND status = 'QUEUED'`, [
      notificationId,
    ]);
    if (!n) return;
    const sent = await this.sms.send({ notificationId: String(n.id), to: n.recipient, message: n.message });
    await this.db.query(
      `UPDATE notifications SET status = 'SENT', provider_reference = $2, sent_at = now() WHERE id = $1 AND status = 'QUEUED'`,
      [notificationId, sent.providerReference],
    );
  }

  /** The caller's notifications about one of its references (another client's read as none). */
  async list(clientId: string, reference: string): Promise<NotificationView[]> {
    const rows = await this.db.query(
      `SELECT reference, channel, recipient, message, status, provider_reference, created_at, sent_at
       FROM notifications WHERE client_id = $1 AND reference = $2 ORDER BY id`,
      [clientId, reference],
    );
    return rows.map((r: NotificationView & { created_at: Date; sent_at: Date | null }) => ({
      ...r,
      created_at: r.created_at.toISOString(),
      sent_at: r.sent_at ? r.sent_at.toISOString() : null,
    }));
  }
}
