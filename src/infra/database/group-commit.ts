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
 */
export interface GroupCommitOptions {
  /** The most items one call carries. */
  maxItems: number;
  /** The most calls out at once (each holds a pool connection while it runs). */
  maxInFlight: number;
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I, R> {
  private readonly queue: Array<Waiting<I, R>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
        void this.send(this.queue.splice(0, this.options.maxItems));
      }
    });
  }

  private async send(batch: Array<Waiting<I, R>>): Promise<void> {
    this.inFlight++;
    try {
      const results = await this.flush(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`group commit: ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
