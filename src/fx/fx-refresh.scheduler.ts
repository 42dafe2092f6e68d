import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { FxRefreshService } from './fx-refresh.service';

/** How often each worker asks whether this hour's refresh is still to do (the first ask is at start-up). */
const ASK_EVERY_MS = 60_000;

/** Runs in the worker: asks for the hourly FX refresh at start-up and every minute. */
@Injectable()
export class FxRefreshScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FxRefreshScheduler.name);
  private timer: NodeJS.Timeout | null = null;
  private asking = false;

  constructor(private readonly refresh: FxRefreshService) {}

  onApplicationBootstrap(): void {
    if (!this.refresh.source) {
      this.logger.warn('no FX rate source is configured: rates change only with fx:set, and conversions stop once they are stale');
      return;
    }
    void this.ask();
    this.timer = setInterval(() => void this.ask(), ASK_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async ask(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      await this.refresh.refreshIfDue();
    } catch (error) {
      this.logger.warn(`FX refresh failed, retried within a minute: ${(error as Error).message}`);
    } finally {
      this.asking = false;
    }
  }
}
