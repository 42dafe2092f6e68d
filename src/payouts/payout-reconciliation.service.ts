import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { reconcileInBatches, ReconciliationPass } from '../infra/queue/reconciliation';
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
    const pass: ReconciliationPass = { checked: 0, finished: 0 };
    // Client by client: a claim locks rows of one client's shard.
    for (const clientId of await this.payouts.clientsToRecheck(this.db.manager, checkedBefore)) {
      const done = await reconcileInBatches(
        (limit) => this.payouts.claimForRecheck(this.db.manager, clientId, checkedBefore, limit),
        async (ids) => (await this.settlement.recheck(ids)).filter((p) => p.finished).length,
      );
      pass.checked += done.checked;
      pass.finished += done.finished;
    }
    return pass;
  }
}
