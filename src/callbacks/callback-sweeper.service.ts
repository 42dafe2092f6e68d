import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';

const BATCH = 500;
const MAX_SWEEP_EVERY_MS = 60_000;

/**
 * Worker-side safety net for callbacks: a PENDING delivery whose due time passed CALLBACK_SWEEP_AFTER_MS ago
 * and whose lease (if any) has ended has lost its job somehow (a worker killed mid-post, a job dropped by an
 * older build); it is booked again through the outbox. Its due time moves to now, so it is swept at most once per
 * threshold; a duplicate job is harmless, since the lease lets only one post through.
 */
@Injectable()
export class CallbackSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CallbackSweeper.name);
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: OutboxService,
  ) {}

  onApplicationBootstrap(): void {
    const every = Math.min(MAX_SWEEP_EVERY_MS, Math.max(250, Math.floor(this.config.callbackSweepAfterMs / 4)));
    this.timer = setInterval(() => {
      this.sweeping = this.sweep().catch((error: Error) => this.logger.warn(`callback sweep failed: ${error.message}`));
    }, every);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }

  /** Re-queues stranded deliveries; returns how many. */
  async sweep(): Promise<number> {
    return this.db.transaction(async (manager) => {
      // An UPDATE answers [rows, affected count].
      const [rows]: [Array<{ id: string }>, number] = await manager.query(
        `UPDATE callback_deliveries SET next_attempt_at = now()
         WHERE id IN (SELECT id FROM callback_deliveries
                      WHERE status = 'PENDING' AND next_attempt_at < now() - make_interval(secs => $1)
                        AND (lease_until IS NULL OR lease_until < now())
                      ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [this.config.callbackSweepAfterMs / 1000],
      );
      for (const { id } of rows)
        await this.outbox.enqueue(manager, TOPICS.deliverCallback, {
          deliveryId: id,
        });
      if (rows.length > 0) this.logger.warn(`${rows.length} pending callback deliveries had no live job; queued again`);
      return rows.length;
    });
  }
}
