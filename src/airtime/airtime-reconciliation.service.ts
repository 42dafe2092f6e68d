import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { reconcileByClient, ReconciliationPass } from '../infra/queue/reconciliation';
import { AirtimeProcessingService } from './airtime-processing.service';
import { AirtimeRepository } from './airtime.repository';

/**
 * Stuck money: recipients left processing (601) or jammed (604) for longer than PAYOUT_RECONCILE_AFTER_MS since the
 * provider was last asked are asked again, and a final answer resolves their hold (one ledger entry, one callback).
 */
@Injectable()
export class AirtimeReconciliationService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly airtime: AirtimeRepository,
    private readonly processing: AirtimeProcessingService,
  ) {}

  /** One pass over every overdue recipient; answers how many were asked and how many reached a final status. */
  async reconcile(now = new Date()): Promise<ReconciliationPass> {
    const checkedBefore = new Date(now.getTime() - this.config.payoutReconcileAfterMs);
    return reconcileByClient(
      await this.airtime.clientsToRecheck(this.db.manager, checkedBefore),
      (clientId, limit) => this.airtime.claimForRecheck(this.db.manager, clientId, checkedBefore, limit),
      (ids) => this.processing.recheck(ids),
    );
  }

  /** When the next pass has work: the oldest open recipient's last question plus the threshold; null when none is open. */
  async nextDue(): Promise<Date | null> {
    const oldest = await this.airtime.oldestChecked(this.db.manager);
    return oldest && new Date(oldest.getTime() + this.config.payoutReconcileAfterMs);
  }
}
