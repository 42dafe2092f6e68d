/**
 * Group commit: requests that arrive while the database is busy are gathered and sent as one call, so N requests
 * pay for one round trip, one transaction and one WAL flush instead of N.
 *
 * There is no fixed wait. A batch leaves on the next turn of the event loop (everything that arrived in the same
 * turn rides along) when fewer than `maxInFlight` batches are out; otherwise requests queue until one comes back,
 * and the next batch takes up to `maxItems` of them. An idle service therefore answers as fast as without
 * batching, and a busy one batches more the busier it is. The flush handles each item on its own and answers one
 * result per item, in order; if the flush itself fails (the database is away), every item of that batch gets the
 * error.
 *
 * Keyed (`laneOf`), items share a batch only with items of the same key, and each key has its own `maxInFlight`:
 * one client's items per call, so that on Citus the call runs on that client's node, and clients never wait on each
 * other's batches (they share no rows).
 */
export interface GroupCommitOptions<I = unknown> {
  /** The most items one call carries. */
  maxItems: number;
  /** The most calls out at once, per lane (each holds a pool connection while it runs). */
  maxInFlight: number;
  /** The lane of an item; without it every item shares one lane. */
  laneOf?: (item: I) => string;
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

interface Lane<I, R> {
  queue: Array<Waiting<I, R>>;
  inFlight: number;
}

export class GroupCommit<I, R> {
  private readonly lanes = new Map<string, Lane<I, R>>();
  /** Lanes with queued items to look at on the next turn. */
  private readonly due = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions<I>,
  ) {}

  submit(item: I): Promise<R> {
    const key = this.options.laneOf?.(item) ?? '';
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { queue: [], inFlight: 0 }));
    return new Promise<R>((resolve, reject) => {
      lane.queue.push({ item, resolve, reject });
      this.schedule(key);
    });
  }

  private schedule(key: string): void {
    const lane = this.lanes.get(key);
    if (!lane || lane.inFlight >= this.options.maxInFlight || lane.queue.length === 0) return;
    this.due.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const dueKey of [...this.due]) {
        this.due.delete(dueKey);
        const dueLane = this.lanes.get(dueKey)!;
        while (dueLane.inFlight < this.options.maxInFlight && dueLane.queue.length > 0) {
          void this.send(dueKey, dueLane, dueLane.queue.splice(0, this.options.maxItems));
        }
      }
    });
  }

  private async send(key: string, lane: Lane<I, R>, batch: Array<Waiting<I, R>>): Promise<void> {
    lane.inFlight++;
    try {
      const results = await this.flush(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      lane.inFlight--;
      if (lane.inFlight === 0 && lane.queue.length === 0) this.lanes.delete(key);
      else this.schedule(key);
    }
  }
}
