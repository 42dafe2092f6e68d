import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ensurePartitions } from './partitions';
import { pgPool } from './prepared';

/**
 * How often each worker makes sure the coming months have partitions. They are made three months ahead, so an
 * hour is only about retrying soon after a run that could not take a table's lock.
 */
const ENSURE_EVERY_MS = 3_600_000;

/** Runs in the worker: `partitions:ensure` at start-up and every hour; concurrent runs are harmless. */
@Injectable()
export class PartitionsScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PartitionsScheduler.name);
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  onApplicationBootstrap(): void {
    void this.ensure();
    this.timer = setInterval(() => void this.ensure(), ENSURE_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async ensure(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const connection = await pgPool(this.db).connect();
      try {
        for (const made of await ensurePartitions(connection)) {
          this.logger.log(`partition ${made.partition} created${made.moved ? `, ${made.moved} row(s) moved from DEFAULT` : ''}`);
        }
      } finally {
        connection.release();
      }
    } catch (error) {
      this.logger.warn(`partitions:ensure failed, retried within the hour: ${(error as Error).message}`);
    } finally {
      this.running = false;
    }
  }
}
