import { Injectable, OnModuleInit } from '@nestjs/common';
import { OutboxWorkers } from '../infra/queue/outbox-workers';
import { TOPICS } from '../infra/queue/queues';
import { NotificationsService } from './notifications.service';

/** Sends queued recipient messages, in groups (BullMQ jobs relayed from the outbox) (rows carry the notification id only). */
@Injectable()
export class NotificationsWorker implements OnModuleInit {
  constructor(
    private readonly workers: OutboxWorkers,
    private readonly notifications: NotificationsService,
  ) {}

  onModuleInit(): void {
    this.workers.handle(TOPICS.sendNotification, (items) => this.notifications.send(items.map((item) => item.payload.notificationId)));
  }
}
