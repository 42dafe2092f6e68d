import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { reconcileInBatches, scheduleReconciliation } from '../../infra/queue/reconciliation';
import { RAILS_CONFIG, type RailsConfig } from '../rails-config';
import { RailRequestsRepository } from '../rail-requests.repository';
import { MPESA, MpesaGateway } from './mpesa-gateway';

/**
 * In every worker: M-Pesa requests without an answer after RAIL_RECONCILE_AFTER_MS are asked about (or sent again,
 * when M-Pesa was busy), then again on a back-off. Workers claim disjoint batches (SKIP LOCKED), each claim leasing
 * its requests for a minute so a crashed worker's are asked again.
 */
@Injectable()
export class MpesaReconciliationScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('MpesaReconciliation');
  private stop: (() => void) | null = null;

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    @Optional() @Inject(MpesaGateway) private readonly gateway: MpesaGateway | null,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.gateway) return;
    const gateway = this.gateway;
    this.stop = scheduleReconciliation(this.logger, 'M-Pesa request(s)', this.rails.reconcileAfterMs, () =>
      reconcileInBatches(
        async (limit) => (await this.requests.claimDue(MPESA, limit, 60_000)).map((request) => request.id),
        async (ids) => {
          for (const id of ids) {
            const request = await this.requests.byId(id);
            if (request) await gateway.reconcile(request).catch((error: Error) => this.logger.warn(`${id}: ${error.message}`));
          }
          return 0;
        },
      ),
    );
  }

  onApplicationShutdown(): void {
    this.stop?.();
  }
}
