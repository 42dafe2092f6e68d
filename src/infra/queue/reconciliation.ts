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
 * Runs `reconcile` in this worker every quarter of the threshold (at least 100 ms), never two passes at once, so an
 * item is re-asked soon after it becomes overdue. Workers share the passes safely (each claims its own batches).
 * Returns what stops it.
 */
export function scheduleReconciliation(
  logger: Logger,
  what: string,
  afterMs: number,
  reconcile: () => Promise<ReconciliationPass>,
): () => void {
  let running = false;
  const timer = setInterval(
    () => {
      if (running) return;
      running = true;
      reconcile()
        .then(({ checked, finished }) => {
          if (checked > 0) logger.log(`reconciliation: ${checked} stuck ${what} re-checked, ${finished} resolved`);
        })
        .catch((error: Error) => logger.warn(`reconciliation pass over ${what} failed: ${error.message}`))
        .finally(() => (running = false));
    },
    Math.max(100, Math.floor(afterMs / 4)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
