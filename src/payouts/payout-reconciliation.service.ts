import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { reconcileByClient, ReconciliationPass } from '../infra/queue/reconciliation';
import { PayoutSettlementService } from './payout-settlement.service';
import { PayoutsRepository } from './payouts.repository';

/**
 * Stuck money: payouts pending or jammed for longer than PAYOUT_RECONCILE_AFTER_MS since the rail was last asked
 * are asked again, and a final answer resolves their hold (one ledger entry, with the callback).
 */
@Injectable()
export class PayoutReconciliationService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly payouts: PayoutsRepository,
    private readonly settlement: PayoutSettlementService,
  ) {}

  /** One pass over every overdue payout; answers how many were asked and how many reached a final status. */
  async reconcile(now = new Date()): Promise<ReconciliationPass> {
    const checkedBefore = new Date(now.getTime() - this.config.payoutReconcileAfterMs);
    return reconcileByClient(
      await this.payouts.clientsToRecheck(this.db.manager, checkedBefore),
      (clientId, limit) => this.payouts.claimForRecheck(this.db.manager, clientId, checkedBefore, limit),
      async (ids) => (await this.settlement.recheck(ids)).filter((p) => p.finished).length,
    );
  }

  /** When the next pass has work: the oldest open payout's last question plus the threshold; null when none is open. */
  async nextDue(): Promise<Date | null> {
    const oldest = await this.payouts.oldestChecked(this.db.manager);
    return oldest && new Date(oldest.getTime() + this.config.payoutReconcileAfterMs);
  }
}
