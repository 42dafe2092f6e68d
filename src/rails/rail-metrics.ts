import { Injectable, OnModuleInit } from '@nestjs/common';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { RailHealth } from './rail-health';
import { RailRequestsRepository } from './rail-requests.repository';

/**
 * Rail health of the operators' adapters in /metrics: the requests an operator has not answered finally, per rail,
 * operation and state, and the oldest one's age (what `admin rails:status` prints); each real operator's circuit and
 * last success. All read when scraped.
 */
@Injectable()
export class RailMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: EngineMetrics,
    private readonly requests: RailRequestsRepository,
    private readonly health: RailHealth,
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
    const operators = async () => (await this.health.report()).flatMap((report) => ('circuit' in report ? [report] : []));
    this.metrics.addGauge(
      'paygate_rail_circuit_state',
      "Each real operator's circuit: 1 on its current state (closed, half_open, open), 0 on the others",
      ['rail', 'operator', 'state'],
      async () =>
        (await operators()).flatMap(({ rail, operator, circuit }) =>
          (['CLOSED', 'HALF_OPEN', 'OPEN'] as const).map((state) => ({
            labels: { rail, operator, state: state.toLowerCase() },
            value: circuit === state ? 1 : 0,
          })),
        ),
    );
    this.metrics.addGauge(
      'paygate_rail_last_success_timestamp_seconds',
      'When each real operator last answered (to within 30 s); absent if never',
      ['rail', 'operator'],
      async () =>
        (await operators()).flatMap(({ rail, operator, last_success_at }) =>
          last_success_at ? [{ labels: { rail, operator }, value: Math.floor(Date.parse(last_success_at) / 1000) }] : [],
        ),
    );
  }
}
