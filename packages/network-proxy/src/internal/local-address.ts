import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { classifyAddress, expandIpv6, normalizeHost } from '../policy/address.ts';

/** Drops an IPv6 zone (`fe80::1%eth0`) and normalises (IPv4-mapped IPv6 becomes IPv4). */
function canonical(address: string): string {
  const zone = address.indexOf('%');
  const bare = zone < 0 ? address : address.slice(0, zone);
  return normalizeHost(bare) ?? bare;
}

/** The addresses of this host's interfaces, canonical. Read each time: interfaces come and go. */
function interfaceAddresses(): Set<string> {
  const out = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) out.add(canonical(entry.address));
  }
  return out;
}

/**
 * True when a connection to `address` ends on this host: loopback (127.0.0.0/8, ::1, and the
 * IPv4-mapped/NAT64 forms `classifyAddress` sees through), unspecified (0.0.0.0/8, `::`, which
 * Linux routes to the local host), link-local (169.254.0.0/16, fe80::/10), or the address of any
 * local interface (a server bound to 0.0.0.0 answers on all of them).
 */
export function isLocalAddress(address: string): boolean {
  const host = canonical(address);
  const family = isIP(host);
  if (family === 0) return false;
  if (classifyAddress(host) === 'loopback') return true;
  if (family === 4) {
    const [a = 0, b = 0] = host.split('.').map(Number);
    if (a === 0 || (a === 169 && b === 254)) return true;
  } else {
    const groups = expandIpv6(host);
    if (groups.every((g) => g === 0)) return true;
    if (((groups[0] ?? 0) & 0xffc0) === 0xfe80) return true;
  }
  return interfaceAddresses().has(host);
}
