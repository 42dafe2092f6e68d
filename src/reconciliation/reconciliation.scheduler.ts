import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationService } from './reconciliation.service';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The previous UTC day of an instant. */
export function previousUtcDay(now: Date): { from: Date; to: Date } {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { from: new Date(to.getTime() - DAY_MS), to };
}

/**
 * In the worker: once a day from RECON_DAILY_AT (UTC; operators' late rows for the day have landed by then), each
 * rail with an operator statement whose previous UTC day has no complete run yet is reconciled, and looked at again
 * every hour, so a run the operator could not answer is tried again (a rerun never doubles a row). A worker started
 * after that time catches up at once.
 */
@Injectable()
export class ReconciliationScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Reconciliation');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly reconciliation: ReconciliationService,
    private readonly runs: ReconciliationRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.reconDailyAtMinute === null || this.reconciliation.rails().length === 0) return;
    this.timer = setInterval(() => void this.tick(new Date()), HOUR_MS);
    this.timer.unref();
    void this.tick(new Date());
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Runs yesterday's reconciliation of each rail not yet complete for it, once the day's run time has come. */
  async tick(now: Date): Promise<void> {
    const dailyAt = this.config.reconDailyAtMinute;
    if (dailyAt === null || now.getUTCHours() * 60 + now.getUTCMinutes() < dailyAt) return;
    const period = previousUtcDay(now);
    for (const rail of this.reconciliation.rails()) {
      if (await this.runs.completed(rail, period)) continue;
      await this.reconciliation
        .run(rail, period, 'scheduler')
        .then((run) => this.logger.log(`${rail} ${period.from.toISOString().slice(0, 10)}: run ${run.id} ${run.outcome}`))
        .catch((error: Error) => this.logger.warn(`${rail}: ${error.message}`));
    }
  }
}
