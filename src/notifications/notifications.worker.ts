import { Injectable, OnModuleInit } from '@nestjs/common';
import { OutboxClaimer } from '../infra/queue/outbox-claimer';
import { TOPICS } from '../infra/queue/queues';
import { NotificationsService } from './notifications.service';

/** Sends queued recipient messages, in groups claimed from the outbox (rows carry the notification id only). */
@Injectable()
export class NotificationsWorker implements OnModuleInit {
  constructor(
    private readonly claimer: OutboxClaimer,
    private readonly notifications: NotificationsService,
  ) {}

  onModuleInit(): void {
    this.claimer.handle(TOPICS.sendNotification, (items) => this.notifications.send(items.map((item) => item.payload.notificationId)), {
      batch: 100,
      held: 200,
    });
  }
}
