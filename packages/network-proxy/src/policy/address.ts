import { isIP } from 'node:net';

/**
 * Where an IP address points: `loopback` (127.0.0.0/8, ::1), `private` (RFC 1918, CGNAT,
 * link-local, ULA, multicast, unspecified, documentation and other reserved ranges) or `public`.
 */
export type AddressClass = 'loopback' | 'private' | 'public';

/** An IPv4 range as `[first address as uint32, prefix length]`. */
type Ipv4Range = readonly [number, number];

/** Every IPv4 range that is not a public unicast destination (IANA special-purpose registry). */
const NON_PUBLIC_IPV4: readonly Ipv4Range[] = [
  [ipv4ToInt('0.0.0.0'), 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  [ipv4ToInt('10.0.0.0'), 8],
  [ipv4ToInt('100.64.0.0'), 10], // carrier-grade NAT
  [ipv4ToInt('169.254.0.0'), 16], // link-local, incl. cloud metadata 169.254.169.254
  [ipv4ToInt('172.16.0.0'), 12],
  [ipv4ToInt('192.0.0.0'), 24],
  [ipv4ToInt('192.0.2.0'), 24],
  [ipv4ToInt('192.88.99.0'), 24],
  [ipv4ToInt('192.168.0.0'), 16],
  [ipv4ToInt('198.18.0.0'), 15],
  [ipv4ToInt('198.51.100.0'), 24],
  [ipv4ToInt('203.0.113.0'), 24],
  [ipv4ToInt('224.0.0.0'), 4], // multicast
  [ipv4ToInt('240.0.0.0'), 4], // reserved, incl. broadcast
];

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inIpv4Range(value: number, [first, prefix]: Ipv4Range): boolean {
  const size = 2 ** (32 - prefix);
  return value >= first && value < first + size;
}

function classifyIpv4(address: string): AddressClass {
  const value = ipv4ToInt(address);
  if (inIpv4Range(value, [ipv4ToInt('127.0.0.0'), 8])) return 'loopback';
  return NON_PUBLIC_IPV4.some((range) => inIpv4Range(value, range)) ? 'private' : 'public';
}

/** Expands an IPv6 address (any valid textual form, optionally with a dotted IPv4 tail) to 8 groups. */
export function expandIpv6(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Rewrite a dotted IPv4 tail (`::ffff:1.2.3.4`) as two hex groups, then parse uniformly.
    const v4 = ipv4ToInt(tail);
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16));
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function embeddedIpv4(groups: readonly number[], at: number): string {
  const hi = groups[at] ?? 0;
  const lo = groups[at + 1] ?? 0;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

function classifyIpv6(address: string): AddressClass {
  const g = expandIpv6(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0] = g;
  const g7 = g[7] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(7) && g7 === 1) return 'loopback';
  if (zeroUpTo(8)) return 'private'; // unspecified
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the IPv4 address.
  if (zeroUpTo(5) && (g5 === 0xffff || g5 === 0)) return classifyIpv4(embeddedIpv4(g, 6));
  // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyIpv4(embeddedIpv4(g, 6));
  }
  if (g0 === 0x2002) return classifyIpv4(embeddedIpv4(g, 1)); // 6to4 embeds an IPv4 address
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // local-use NAT64
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'private'; // discard-only
  if (g0 === 0x2001 && g1 === 0xdb8) return 'private'; // documentation
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // unique local
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return 'private'; // link/site-local
  if ((g0 & 0xff00) === 0xff00) return 'private'; // multicast
  return 'public';
}

/** Classifies an IP address literal; throws a TypeError for anything that is not one. */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 4) return classifyIpv4(address);
  if (family === 6) return classifyIpv6(address);
  throw new TypeError(`not an IP address: ${address}`);
}

/** True for `localhost` and names under `.localhost`, which always mean the local host (RFC 6761). */
export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Canonical form of a host as a client sent it: lower case, IDN as punycode, trailing dot and IPv6
 * brackets removed, legacy IPv4 spellings (`127.1`, `0x7f.0.0.1`) as dotted quads, IPv6 compressed
 * and IPv4-mapped IPv6 as the IPv4 address. Returns undefined for anything that is not a host name.
 */
export function normalizeHost(raw: string): string | undefined {
  let host = raw.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '' || host.length > 255) return undefined;
  // Only name characters (any script, for IDN) or an IPv6 literal: URL syntax such as `user@`,
  // `/path`, `%41` or `:port` must not sneak through the URL parser below.
  if (isIP(host) !== 6 && !/^[\p{L}\p{M}\p{N}._-]+$/u.test(host)) return undefined;
  const literal = isIP(host) === 6 ? `[${host}]` : host;
  let parsed: string;
  try {
    // The WHATWG host parser does IDNA, IPv4 legacy forms and IPv6 canonicalisation in one place.
    parsed = new URL(`http://${literal}/`).hostname;
  } catch {
    return undefined;
  }
  if (parsed.startsWith('[')) {
    const v6 = parsed.slice(1, -1);
    const g = expandIpv6(v6);
    if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return embeddedIpv4(g, 6);
    return v6;
  }
  if (parsed.endsWith('.')) parsed = parsed.slice(0, -1);
  if (isIP(parsed) === 4) return parsed;
  if (parsed.length === 0 || parsed.length > 253) return undefined;
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(parsed)) return undefined;
  return parsed;
}
