import { Injectable } from '@nestjs/common';

/**
 * The worker's transactions that post to a merchant's shared accounts (its float or settlement wallet, in-flight and
 * fee income accounts, which every collection, payout and airtime booking of the merchant locks) run one at a time
 * per process, in the order they came. More at once from one process would only queue on those rows in Postgres,
 * each holding a connection and a backend that wakes on every release of the row; queued here they cost nothing, and
 * the work behind them gathers into bigger groups. A task must open its transaction inside `run`, never hold one while
 * waiting for it.
 */
@Injectable()
export class PostingLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
