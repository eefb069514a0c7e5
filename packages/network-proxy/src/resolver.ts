import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { ExecError, RpcError } from '@execd/protocol';
import { normalizeHost } from './policy/address.ts';

/**
 * Resolves a host name to IP address literals. Resolution happens in the proxy, outside the
 * sandbox (the command sends host names), so DNS never leaves the sandbox. Reject when the name
 * does not resolve.
 */
export type NetworkResolver = (host: string) => Promise<readonly string[]>;

/** The host's resolver (`getaddrinfo`, so `/etc/hosts` and nsswitch apply), every address, in order. */
export const systemResolver: NetworkResolver = async (host) => {
  const entries = await dns.lookup(host, { all: true, verbatim: true });
  return entries.map((entry) => entry.address);
};

/**
 * A resolver with fixed entries, like `docker run --add-host name:ip`: names listed in `entries`
 * resolve to their addresses; other names go to `fallback` or fail with `notFound`.
 * Throws `RpcError('invalidParams')` for a malformed name or address.
 */
export function createStaticResolver(
  entries: Readonly<Record<string, string | readonly string[]>>,
  fallback?: NetworkResolver,
): NetworkResolver {
  const table = new Map<string, readonly string[]>();
  for (const [name, value] of Object.entries(entries)) {
    const host = normalizeHost(name);
    if (host === undefined)
      throw new RpcError('invalidParams', `static resolver: invalid host name ${JSON.stringify(name)}`);
    const addresses = typeof value === 'string' ? [value] : [...value];
    for (const address of addresses) {
      if (isIP(address) === 0) {
        throw new RpcError(
          'invalidParams',
          `static resolver: ${JSON.stringify(address)} for ${name} is not an IP address`,
        );
      }
    }
    table.set(host, addresses);
  }
  return async (host) => {
    const known = table.get(normalizeHost(host) ?? host);
    if (known) return known;
    if (fallback) return await fallback(host);
    throw new ExecError('notFound', `cannot resolve ${host}: not in the static resolver`);
  };
}
