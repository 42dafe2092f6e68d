import ipaddr from 'ipaddr.js';

/** Whether a source address is on an allow-list of addresses and CIDRs (`*` allows any). */
export function addressAllowed(address: string, allowList: string[]): boolean {
  if (allowList.includes('*')) return true;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  return allowList.some((entry) => {
    try {
      const [range, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.process(entry), null];
      const candidate = range.kind() === parsed.kind() ? parsed : null;
      if (!candidate) return false;
      return bits === null ? candidate.toNormalizedString() === range.toNormalizedString() : candidate.match([range, bits] as never);
    } catch {
      return false;
    }
  });
}
