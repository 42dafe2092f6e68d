import { Logger } from '@nestjs/common';

/** How many overdue items one claim takes: small, so a claim's stamp never covers more than a worker re-checks soon. */
const BATCH = 100;

/** What a reconciliation pass did: how many items it asked about, and how many of them reached a final status. */
export interface ReconciliationPass {
  checked: number;
  finished: number;
}

/**
 * One pass over every overdue item: claims batches (`claim` stamps what it returns as asked now, SKIP LOCKED, so
 * concurrent workers get disjoint batches) until a short one, and re-checks each batch (`recheck` answers how many
 * reached a final status).
 */
export async function reconcileInBatches(
  claim: (limit: number) => Promise<string[]>,
  recheck: (ids: string[]) => Promise<number>,
): Promise<ReconciliationPass> {
  const pass: ReconciliationPass = { checked: 0, finished: 0 };
  for (;;) {
    const ids = await claim(BATCH);
    if (ids.length > 0) pass.finished += await recheck(ids);
    pass.checked += ids.length;
    if (ids.length < BATCH) return pass;
  }
}

/**
 * One pass over these clients' overdue items, client by client: a claim locks rows of one client's shard (Citus
 * refuses a locking read across clients), so the clients with work due are found first by a plain read.
 */
export async function reconcileByClient(
  clients: string[],
  claim: (clientId: string, limit: number) => Promise<string[]>,
  recheck: (ids: string[]) => Promise<number>,
): Promise<ReconciliationPass> {
  const pass: ReconciliationPass = { checked: 0, finished: 0 };
  for (const clientId of clients) {
    const done = await reconcileInBatches((limit) => claim(clientId, limit), recheck);
    pass.checked += done.checked;
    pass.finished += done.finished;
  }
  return pass;
}

/**
 * Runs `reconcile` in this worker, never two passes at once, so an item is re-asked soon after it becomes overdue.
 * Without `nextDue`, every quarter of the threshold (at least 100 ms): items may fall due sooner than the threshold.
 * With it (when the oldest open item is due next, null when none is open), the next pass waits until then, and a
 * threshold at most, since an item opened meanwhile falls due no sooner: idle, a pass per threshold. Workers share
 * the passes safely (each claims its own batches). Returns what stops it.
 */
export function scheduleReconciliation(
  logger: Logger,
  what: string,
  afterMs: number,
  reconcile: () => Promise<ReconciliationPass>,
  nextDue?: () => Promise<Date | null>,
): () => void {
  const everyMs = Math.max(100, Math.floor(afterMs / 4));
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const pass = async (): Promise<number> => {
    try {
      const { checked, finished } = await reconcile();
      if (checked > 0) logger.log(`reconciliation: ${checked} stuck ${what} re-checked, ${finished} resolved`);
      if (!nextDue) return everyMs;
      const next = await nextDue();
      return Math.max(100, Math.min(afterMs, next ? next.getTime() - Date.now() : afterMs));
    } catch (error) {
      logger.warn(`reconciliation pass over ${what} failed: ${(error as Error).message}`);
      return everyMs;
    }
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void pass().then(schedule), ms);
    timer.unref();
  };
  schedule(everyMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
