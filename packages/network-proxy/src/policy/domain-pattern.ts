import { isIP } from 'node:net';
import { RpcError } from '@execd/protocol';
import { normalizeHost } from './address.ts';

/**
 * One compiled allow/deny entry. Syntax (as the original's `allowed_domains`):
 * - `example.com`: exactly that host;
 * - `*.example.com`: any subdomain (any depth), not the apex;
 * - `**.example.com`: the apex and any subdomain;
 * - `*`: any host;
 * - IP literals: `10.0.0.5`, `::1` or `[::1]`;
 * each optionally followed by `:PORT` (`[::1]:8080` for IPv6). No port means any port.
 */
export interface DomainPattern {
  /** The entry as written (used as the `rule` in decision records). */
  readonly source: string;
  readonly kind: 'any' | 'exact' | 'subdomains' | 'apexAndSubdomains';
  /** Normalised host (empty for `any`). */
  readonly host: string;
  /** The port the entry is limited to, or undefined for any port. */
  readonly port: number | undefined;
}

function invalid(pattern: string, why: string): RpcError {
  return new RpcError('invalidParams', `invalid network domain pattern ${JSON.stringify(pattern)}: ${why}`);
}

function splitPort(pattern: string): { hostPart: string; portPart: string | undefined } {
  if (pattern.startsWith('[')) {
    const close = pattern.indexOf(']');
    if (close < 0) throw invalid(pattern, 'unclosed "["');
    const after = pattern.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw invalid(pattern, 'unexpected text after "]"');
    return { hostPart: pattern.slice(1, close), portPart: after === '' ? undefined : after.slice(1) };
  }
  // Two or more colons without brackets: a bare IPv6 literal, which cannot carry a port.
  if ((pattern.match(/:/g) ?? []).length >= 2) return { hostPart: pattern, portPart: undefined };
  const colon = pattern.lastIndexOf(':');
  if (colon < 0) return { hostPart: pattern, portPart: undefined };
  return { hostPart: pattern.slice(0, colon), portPart: pattern.slice(colon + 1) };
}

function parsePort(pattern: string, portPart: string | undefined): number | undefined {
  if (portPart === undefined || portPart === '*') return undefined;
  if (!/^\d{1,5}$/.test(portPart) || Number(portPart) < 1 || Number(portPart) > 65535) {
    throw invalid(pattern, `port must be 1-65535 or "*", got ${JSON.stringify(portPart)}`);
  }
  return Number(portPart);
}

/** Parses one entry; throws `RpcError('invalidParams')` naming the entry when it is malformed. */
export function parseDomainPattern(pattern: string): DomainPattern {
  const source = pattern.trim();
  if (source === '') throw invalid(pattern, 'empty');
  const { hostPart, portPart } = splitPort(source);
  const port = parsePort(source, portPart);
  if (hostPart === '*') return { source, kind: 'any', host: '', port };
  let kind: DomainPattern['kind'] = 'exact';
  let rest = hostPart;
  if (rest.startsWith('**.')) {
    kind = 'apexAndSubdomains';
    rest = rest.slice(3);
  } else if (rest.startsWith('*.')) {
    kind = 'subdomains';
    rest = rest.slice(2);
  }
  if (rest.includes('*')) throw invalid(source, 'a wildcard is only allowed as a leading "*." or "**."');
  const host = normalizeHost(rest);
  if (host === undefined) throw invalid(source, 'not a valid host name or IP address');
  if (kind !== 'exact' && isIP(host) !== 0) throw invalid(source, 'wildcards do not apply to IP addresses');
  return { source, kind, host, port };
}

/** True when `host` (normalised) and `port` fall under the entry. */
export function matchesDomainPattern(pattern: DomainPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  switch (pattern.kind) {
    case 'any':
      return true;
    case 'exact':
      return host === pattern.host;
    case 'subdomains':
      return host.endsWith(`.${pattern.host}`);
    case 'apexAndSubdomains':
      return host === pattern.host || host.endsWith(`.${pattern.host}`);
  }
}
