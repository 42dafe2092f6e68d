/**
 * Promise.allSettled over `items` with at most `limit` calls of `call` out at once: what keeps a group's questions to
 * an operator within what its API takes (spike arrest answers busy, which counts against the rail's circuit).
 */
export async function settleBounded<T, R>(items: T[], limit: number, call: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: 'fulfilled', value: await call(items[i]) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
