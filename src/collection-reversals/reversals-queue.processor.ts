import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { OutboxWorkers, rowByRow } from '../infra/queue/outbox-workers';
import { TOPICS } from '../infra/queue/queues';
import { CollectionReversalsService } from './collection-reversals.service';

/**
 * Collection reversals (worker role), a group of steps per BullMQ job: the service reloads each reversal and advances
 * it if it still applies.
 */
@Injectable()
export class ReversalsProcessor implements OnModuleInit {
  private readonly logger = new Logger(ReversalsProcessor.name);

  constructor(
    private readonly workers: OutboxWorkers,
    private readonly reversals: CollectionReversalsService,
  ) {}

  onModuleInit(): void {
    this.workers.handle(
      TOPICS.processReversal,
      rowByRow(this.logger, (item) => this.reversals.advance(item.payload.reversalId)),
    );
  }
}
