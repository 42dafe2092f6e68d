import type { QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import { GroupCommit, GroupCommitOptions } from './group-commit';
import { isRetryableTransactionError } from '../../common/errors/pg-errors';
import { PreparedStatement, runPrepared } from './prepared';

const MAX_ATTEMPTS = 3;
/** As the wallet money groups (src/transactions/wallet-money-batch.ts): one batch out at a time per process and client. */
const DEFAULT_BATCHES: GroupCommitOptions = { maxItems: 64, maxInFlight: 1 };

/** An item and the client it is for: a batch carries one client's items (`p_client_id`, the Citus distribution argument). */
interface ClientItem<I> {
  clientId: string;
  item: I;
}

/**
 * A one-call SQL function run by group commit: the calls one process makes at once for one client go to the database
 * as one call of the function's batch form, which takes the client ($1, `p_client_id`) and the items (objects naming
 * the other arguments) as a JSON array ($2), runs the function once per item in one transaction, and answers one row
 * per item with its 1-based position (`item_no`).
 *
 * A batch that fails as a whole is rolled back: on a deadlock or serialization failure it is sent again; on any
 * other error each of its items is sent on its own, so that only the item at fault gets the error.
 */
/** One item's answer: its row, or the error its own call raised. */
type Answer<R> = { row: R } | { error: unknown };

export class BatchedCall<R extends QueryResultRow, I = Record<string, unknown>> {
  private readonly group: GroupCommit<ClientItem<I>, Answer<R>>;

  constructor(
    private readonly db: DataSource,
    private readonly batchForm: PreparedStatement,
    options: GroupCommitOptions = DEFAULT_BATCHES,
  ) {
    this.group = new GroupCommit((items) => this.send(items), { ...options, laneOf: (i) => i.clientId });
  }

  /** The function's answer row for this client's item (JSON-encodable; dates as ISO strings, JSON values as values). */
  async call(clientId: string, item: I): Promise<R> {
    const answer = await this.group.submit({ clientId, item });
    if ('error' in answer) throw answer.error;
    return answer.row;
  }

  private async send(items: Array<ClientItem<I>>): Promise<Array<Answer<R>>> {
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await runPrepared<R & { item_no: number }>(this.db, this.batchForm, [
          items[0].clientId,
          JSON.stringify(items.map((i) => i.item)),
        ]);
        const answers: Array<Answer<R>> = new Array(items.length);
        for (const { item_no, ...row } of rows) answers[item_no - 1] = { row: row as unknown as R };
        return answers;
      } catch (error) {
        if (isRetryableTransactionError(error) && attempt < MAX_ATTEMPTS) continue;
        if (items.length === 1) return [{ error }];
        return (await Promise.all(items.map((item) => this.send([item])))).flat();
      }
    }
  }
}
