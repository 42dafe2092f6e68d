import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { SMS_NOTIFIER, type SmsNotifier } from './sms-notifier';

/** An SMS to queue, once per client, reference and channel. */
export interface SmsToQueue {
  clientId: string;
  reference: string;
  recipient: string;
  message: string;
}

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
  ) {}

  /** notifications_queue_sms (src/notifications/sql/notifications_queue_sms.sql), in the caller's transaction. */
  async queueSms(manager: EntityManager, messages: SmsToQueue[]): Promise<void> {
    if (messages.length === 0) return;
    await manager.query(
      `SELECT notifications_queue_sms(p_client_ids => $1::uuid[], p_references => $2::text[], p_recipients => $3::text[],
         p_messages => $4::text[])`,
      [messages.map((m) => m.clientId), messages.map((m) => m.reference), messages.map((m) => m.recipient), messages.map((m) => m.message)],
    );
  }

  /**
   * The sending work: queued messages go to the gateway, each once (keyed by its id), all at once, and are marked sent
   * in one statement. Answers, per id, whether it is done (sent, or not queued any more); a failed send is tried again.
   */
  async send(notificationIds: string[]): Promise<boolean[]> {
    const queued: Array<{ client_id: string; id: string; recipient: string; message: string }> = await this.db.query(
      `SELECT client_id, id::text, recipient, message FROM notifications WHERE id = ANY($1::bigint[]) AND status = 'QUEUED'`,
      [notificationIds],
    );
    const sent = await Promise.allSettled(queued.map((n) => this.sms.send({ notificationId: n.id, to: n.recipient, message: n.message })));
    const delivered = queued.flatMap((n, i) =>
      sent[i].status === 'fulfilled' ? [{ clientId: n.client_id, id: n.id, reference: sent[i].value.providerReference }] : [],
    );
    if (delivered.length > 0) {
      await this.db.query(
        `UPDATE notifications n SET status = 'SENT', provider_reference = s.reference, sent_at = now()
         FROM unnest($1::uuid[], $2::bigint[], $3::text[]) s(client_id, id, reference)
         WHERE n.client_id = s.client_id AND n.id = s.id AND n.status = 'QUEUED'`,
        [delivered.map((d) => d.clientId), delivered.map((d) => d.id), delivered.map((d) => d.reference)],
      );
    }
    const failed = new Set(queued.filter((_, i) => sent[i].status === 'rejected').map((n) => n.id));
    return notificationIds.map((id) => !failed.has(String(id)));
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
