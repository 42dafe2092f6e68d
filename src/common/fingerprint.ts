import { createHash } from 'node:crypto';

/**
 * A stable digest of what a request asks for, to tell a replay (same body) from a reused reference (different
 * body). Keys are sorted, so field order does not matter; callers normalise amounts first.
 */
export function requestFingerprint(kind: string, body: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${kind}:${canonicalJson(body)}`)
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
