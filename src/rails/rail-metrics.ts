import { Injectable, OnModuleInit } from '@nestjs/common';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { RailRequestsRepository } from './rail-requests.repository';

/**
 * Rail health of the operators' adapters in /metrics: the requests an operator has not answered finally, per rail,
 * operation and state, and the oldest one's age (what `admin rails:status` prints), read when scraped.
 */
@Injectable()
export class RailMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: EngineMetrics,
    private readonly requests: RailRequestsRepository,
  ) {}

  onModuleInit(): void {
    const labelNames = ['rail', 'operation', 'state'];
    const inFlight = async (value: 'count' | 'oldest_seconds') =>
      (await this.requests.inFlight()).map((row) => ({
        labels: { rail: row.rail, operation: row.operation, state: row.state },
        value: row[value],
      }));
    this.metrics.addGauge('paygate_rail_requests_in_flight', 'Requests at an operator without a final answer', labelNames, () =>
      inFlight('count'),
    );
    this.metrics.addGauge(
      'paygate_rail_requests_oldest_seconds',
      'Age of the oldest request at an operator without a final answer',
      labelNames,
      () => inFlight('oldest_seconds'),
    );
  }
}
