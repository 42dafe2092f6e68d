/** The items by key, each list in the items' order; the keys in the order they first appear. */
export function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/**
 * The items as groups of one key each, of at most `size` items, ordered by their first item's place: a relay hands
 * over the oldest work first, and a job carries one client's rows only.
 */
export function groupsOfOneKey<T, K>(items: readonly T[], key: (item: T) => K, size: number): T[][] {
  const place = new Map(items.map((item, i) => [item, i]));
  return [...groupBy(items, key).values()]
    .flatMap((ofKey) => Array.from({ length: Math.ceil(ofKey.length / size) }, (_, i) => ofKey.slice(i * size, (i + 1) * size)))
    .sort((a, b) => place.get(a[0])! - place.get(b[0])!);
}
