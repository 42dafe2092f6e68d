import { Processor } from '@nestjs/bullmq';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { QUEUES } from '../infra/queue/queues';
import { NotificationsService } from './notifications.service';

type NotificationsJob = { notificationId?: string; outboxId?: string };

/** Sends queued recipient messages; a job carries the notification id only. */
@Processor(QUEUES.notifications, { concurrency: 10 })
export class NotificationsProcessor extends OutboxJobProcessor<NotificationsJob> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    private readonly notifications: NotificationsService,
  ) {
    super(QUEUES.notifications, db, metrics);
  }

  async process(job: Job<NotificationsJob>): Promise<void> {
    if (job.name !== 'send') throw new Error(`unknown notifications job ${job.name}`);
    return this.notifications.send(job.data.notificationId!);
  }
}
