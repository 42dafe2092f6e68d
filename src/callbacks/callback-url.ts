import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/**
 * Callback URLs must be HTTPS; in sandbox http:// to a loopback host is accepted too, so a merchant can test
 * against a local receiver (provider contract §5). Returns why a URL is refused, or null.
 */
export function callbackUrlProblem(raw: string, isSandbox: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isSandbox && (LOOPBACK_HOSTS.has(url.hostname) || url.hostname.startsWith('127.'))) return null;
  return isSandbox ? 'must be HTTPS (http:// is accepted for loopback hosts in sandbox)' : 'must be HTTPS';
}

/**
 * In production a callback must not reach our own network: URLs resolving to private, loopback or link-local
 * addresses are refused (checked again at delivery time, since DNS can change).
 */
export async function resolvesToPrivateAddress(raw: string): Promise<boolean> {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) return true;
  return addresses.some(isPrivateAddress);
}

export function isPrivateAddress(address: string): boolean {
  if (address.includes(':')) {
    const a = address.toLowerCase();
    if (a.startsWith('::ffff:')) return isPrivateAddress(a.slice(7));
    return a === '::1' || a === '::' || a.startsWith('fc') || a.startsWith('fd') || a.startsWith('fe80');
  }
  const [a, b] = address.split('.').map(Number);
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/** Why a merchant's callback URL is refused at acceptance (both rules above), or null when it is acceptable. */
export async function callbackUrlRefusal(raw: string, isSandbox: boolean): Promise<string | null> {
  const problem = callbackUrlProblem(raw, isSandbox);
  if (problem) return problem;
  if (!isSandbox && (await resolvesToPrivateAddress(raw))) return 'must not resolve to a private, loopback or link-local address';
  return null;
}
