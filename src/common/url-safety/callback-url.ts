import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where callbacks may go (issue 11 §1). Every URL a merchant or operator gives us for callbacks passes
 * `callbackUrlProblem` when it enters (charges, checkout, `callback:set`, `seed`, and the disbursement callbacks), and
 * the delivery resolves the host once more, classifies every address (`resolveCallbackTarget`) and connects to the
 * address that was checked, so DNS cannot swap it in between.
 *
 * Only public unicast addresses are allowed. An IPv6 address that embeds an IPv4 one (IPv4-mapped, IPv4-compatible,
 * NAT64, 6to4) is judged by the IPv4 address it carries. Link-local addresses and the cloud metadata address are
 * refused in every mode; sandbox also accepts plain http:// to loopback, so a merchant can test against a local
 * receiver (provider contract §5); production requires https. A sandbox in a container reaches the merchant's
 * machine as `host.docker.internal` (Docker's name for the host, a private address): sandbox accepts that one name,
 * over http too, resolving to a private or loopback address, never link-local or metadata.
 */

export type CallbackMode = 'sandbox' | 'production';

const REFUSED_V4 = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback (sandbox accepts it, see below)
  '169.254.0.0/16', // link-local, incl. the metadata address 169.254.169.254
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24',
  '198.51.100.0/24',
  '203.0.113.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast
  '198.18.0.0/15', // benchmarking
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, incl. broadcast 255.255.255.255
].map((cidr) => ipaddr.parseCIDR(cidr));

const REFUSED_V6 = [
  '::/128',
  '::1/128', // unspecified, loopback
  '100::/64', // discard-only
  '2001::/23', // IETF protocol assignments (Teredo, ORCHID, …)
  '2001:db8::/32',
  '3fff::/20', // documentation
  'fc00::/7', // unique-local
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
].map((cidr) => ipaddr.parseCIDR(cidr));

/** Prefixes whose addresses carry an IPv4 address, and where in the 16 bytes it sits. */
const EMBEDDING_V4: Array<{ prefix: [ipaddr.IPv6, number]; offset: number }> = [
  {
    prefix: ipaddr.parseCIDR('::ffff:0:0/96') as [ipaddr.IPv6, number],
    offset: 12,
  }, // IPv4-mapped
  { prefix: ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number], offset: 12 }, // IPv4-compatible (deprecated)
  {
    prefix: ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number],
    offset: 12,
  }, // NAT64 well-known
  {
    prefix: ipaddr.parseCIDR('64:ff9b:1::/48') as [ipaddr.IPv6, number],
    offset: 12,
  }, // NAT64 local use (RFC 8215)
  { prefix: ipaddr.parseCIDR('2002::/16') as [ipaddr.IPv6, number], offset: 2 }, // 6to4
];

/** Docker's name for the machine that runs the container (Docker Desktop; `host-gateway` on Linux). */
export const DOCKER_HOST_NAME = 'host.docker.internal';

const LOOPBACK_V4 = ipaddr.parseCIDR('127.0.0.0/8');
const LINK_LOCAL_V4 = ipaddr.parseCIDR('169.254.0.0/16');
const LINK_LOCAL_V6 = ipaddr.parseCIDR('fe80::/10');

export type AddressClass = 'public' | 'loopback' | 'link-local' | 'refused';

/** Classifies one IP address (v4 or v6, any textual form `ipaddr.js` parses). Unparseable → refused. */
export function classifyAddress(address: string): AddressClass {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'refused';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const embedding = EMBEDDING_V4.find(({ prefix }) => v6.match(prefix));
    // :: and ::1 fall inside the IPv4-compatible prefix but are IPv6's own unspecified and loopback addresses.
    if (embedding && !v6.match(ipaddr.parseCIDR('::/127') as [ipaddr.IPv6, number])) {
      const bytes = v6.toByteArray().slice(embedding.offset, embedding.offset + 4);
      return classifyV4(new ipaddr.IPv4(bytes));
    }
    if (v6.match(LINK_LOCAL_V6)) return 'link-local';
    if (v6.toNormalizedString() === '0:0:0:0:0:0:0:1') return 'loopback';
    return REFUSED_V6.some((range) => v6.match(range)) ? 'refused' : 'public';
  }
  return classifyV4(parsed as ipaddr.IPv4);
}

function classifyV4(v4: ipaddr.IPv4): AddressClass {
  if (v4.match(LINK_LOCAL_V4)) return 'link-local';
  if (v4.match(LOOPBACK_V4)) return 'loopback';
  return REFUSED_V4.some((range) => v4.match(range)) ? 'refused' : 'public';
}

/** A private-range address (10/8, 172.16/12, 192.168/16, fc00::/7), where Docker puts the host's address. */
function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'private' || parsed.range() === 'uniqueLocal';
}

/** What kind of forbidden address this is in this mode ("a loopback address"), or null when a callback may go there. */
export function forbiddenAddressKind(address: string, mode: CallbackMode): string | null {
  switch (classifyAddress(address)) {
    case 'public':
      return null;
    case 'loopback':
      return mode === 'sandbox' ? null : 'a loopback address';
    case 'link-local':
      return 'a link-local or metadata address';
    default:
      return 'a private, reserved or non-unicast address';
  }
}

/**
 * Why a callback URL is refused, or null. Checks the scheme, credentials, and the host when it is an IP literal
 * (the WHATWG parser already turned decimal, octal and hex IPv4 forms such as `2130706433` or `0x7f.1` into
 * dotted quads). Host names are judged on their resolved addresses by `resolvedCallbackUrlProblem` and again at
 * delivery.
 */
export function callbackUrlProblem(raw: string, isSandbox: boolean): string | null {
  const mode: CallbackMode = isSandbox ? 'sandbox' : 'production';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be HTTPS';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = ipaddr.isValid(host) ? host : null;
  const loopbackName = host === 'localhost' || host.endsWith('.localhost');
  if (url.protocol === 'http:') {
    const local = loopbackName || host === DOCKER_HOST_NAME || (literal !== null && classifyAddress(literal) === 'loopback');
    if (!isSandbox || !local)
      return isSandbox ? `must be HTTPS (http:// is accepted for loopback hosts and ${DOCKER_HOST_NAME} in sandbox)` : 'must be HTTPS';
  }
  const forbidden = literal ? forbiddenAddressKind(literal, mode) : null;
  if (forbidden) return `must not point to ${forbidden}`;
  if (loopbackName && !isSandbox) return 'must not point to a loopback address';
  return null;
}

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface CallbackTarget {
  url: URL;
  /** The checked address the delivery connects to. */
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the URL's host once and checks every address it resolves to; the delivery then connects to the first
 * of them. Returns the target, or the reason it is refused.
 */
export async function resolveCallbackTarget(
  raw: string,
  isSandbox: boolean,
  lookup: Lookup = systemLookup,
): Promise<{ target: CallbackTarget } | { problem: string }> {
  const problem = callbackUrlProblem(raw, isSandbox);
  if (problem) return { problem };
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    addresses = await lookup(host).catch(() => []);
    if (addresses.length === 0) return { problem: 'has a host name that does not resolve' };
  }
  const mode: CallbackMode = isSandbox ? 'sandbox' : 'production';
  const dockerHost = isSandbox && host === DOCKER_HOST_NAME;
  for (const { address } of addresses) {
    if (dockerHost && isPrivateAddress(address)) continue;
    const forbidden = forbiddenAddressKind(address, mode);
    if (forbidden) return { problem: `must not resolve to ${forbidden} (${address})` };
  }
  return {
    target: {
      url,
      address: addresses[0].address,
      family: addresses[0].family === 6 ? 6 : 4,
    },
  };
}

/** The entry-time check of a host name in production (sandbox leaves it to delivery, where it is checked anyway). */
export async function resolvedCallbackUrlProblem(raw: string, isSandbox: boolean, lookup: Lookup = systemLookup): Promise<string | null> {
  const result = await resolveCallbackTarget(raw, isSandbox, lookup);
  return 'problem' in result ? result.problem : null;
}
