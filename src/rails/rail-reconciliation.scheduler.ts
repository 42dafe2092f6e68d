import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { reconcileByClient, scheduleReconciliation } from '../infra/queue/reconciliation';
import { AfricasTalkingGateway } from './africastalking/africastalking-gateway';
import { JengaGateway } from './jenga/jenga-gateway';
import { MpesaGateway } from './mpesa/mpesa-gateway';
import { RailRequestsRepository } from './rail-requests.repository';
import { RAILS_CONFIG, type RailsConfig } from './rails-config';

/**
 * In every worker, for each real operator configured: requests without an answer after RAIL_RECONCILE_AFTER_MS are
 * asked about (or sent again, when the operator said it did not take them), then again on a back-off. Workers claim
 * disjoint batches client by client (SKIP LOCKED), each claim leasing its requests for a minute so a crashed worker's are asked again.
 */
@Injectable()
export class RailReconciliationScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RailReconciliation');
  private readonly stops: Array<() => void> = [];

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    @Optional() @Inject(MpesaGateway) private readonly mpesa: MpesaGateway | null,
    @Optional() @Inject(JengaGateway) private readonly jenga: JengaGateway | null,
    @Optional() @Inject(AfricasTalkingGateway) private readonly africastalking: AfricasTalkingGateway | null,
  ) {}

  onApplicationBootstrap(): void {
    for (const gateway of [this.mpesa, this.jenga, this.africastalking]) {
      if (!gateway) continue;
      this.stops.push(
        scheduleReconciliation(this.logger, `${gateway.rail} request(s)`, this.rails.reconcileAfterMs, async () =>
          reconcileByClient(
            await this.requests.clientsDue(gateway.rail),
            async (clientId, limit) => (await this.requests.claimDue(gateway.rail, clientId, limit, 60_000)).map((request) => request.id),
            async (ids) => {
              for (const id of ids) {
                const request = await this.requests.byId(id);
                if (request)
                  await gateway.reconcile(request).catch((error: Error) => this.logger.warn(`${gateway.rail} ${id}: ${error.message}`));
              }
              return 0;
            },
          ),
        ),
      );
    }
  }

  onApplicationShutdown(): void {
    for (const stop of this.stops) stop();
  }
}
