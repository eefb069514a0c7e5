import { isIPv4, isIPv6 } from 'node:net';
import { ExecError } from '@execd/protocol';

/** The original's `DEFAULT_LISTEN_URL`: loopback, a port chosen by the kernel. */
export const DEFAULT_LISTEN_URL = 'ws://127.0.0.1:0';

/** Where a server listens: a WebSocket on an IP socket address, or one stdio connection. */
export type ListenTarget =
  | { readonly kind: 'websocket'; readonly host: string; readonly port: number }
  | { readonly kind: 'stdio' };

const MAX_PORT = 65_535;

/** `IP:PORT` with an IPv4 literal, or `[IPv6]:PORT`; undefined for anything else. */
export function parseSocketAddress(address: string): { host: string; port: number } | undefined {
  let host: string;
  let portText: string;
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    if (close < 0 || address[close + 1] !== ':') return undefined;
    host = address.slice(1, close);
    portText = address.slice(close + 2);
    if (!isIPv6(host)) return undefined;
  } else {
    const colon = address.lastIndexOf(':');
    if (colon < 0) return undefined;
    host = address.slice(0, colon);
    portText = address.slice(colon + 1);
    // Like a Rust `SocketAddr`: an IPv4 literal only (a bare IPv6 needs brackets, names are refused).
    if (!isIPv4(host)) return undefined;
  }
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > MAX_PORT) return undefined;
  return { host, port };
}

/**
 * Parses a `--listen` value as the original does: `stdio`/`stdio://`, or `ws://IP:PORT` with an
 * IP literal (IPv6 in brackets). Throws `ExecError` (`invalidParams`) with the original's texts.
 */
export function parseListenUrl(listenUrl: string): ListenTarget {
  if (listenUrl === 'stdio' || listenUrl === 'stdio://') return { kind: 'stdio' };
  if (listenUrl.startsWith('ws://')) {
    const address = parseSocketAddress(listenUrl.slice('ws://'.length));
    if (!address) {
      throw new ExecError(
        'invalidParams',
        `invalid websocket --listen URL \`${listenUrl}\`; expected \`ws://IP:PORT\``,
      );
    }
    return { kind: 'websocket', ...address };
  }
  throw new ExecError(
    'invalidParams',
    `unsupported --listen URL \`${listenUrl}\`; expected \`ws://IP:PORT\` or \`stdio\``,
  );
}

/** Formats a bound address the way the original prints it: `ws://127.0.0.1:4000`, `ws://[::1]:4000`. */
export function formatWebSocketUrl(host: string, port: number): string {
  return isIPv6(host) ? `ws://[${host}]:${port}` : `ws://${host}:${port}`;
}

/** True for addresses only this machine can reach: 127.0.0.0/8, `::1` and IPv4-mapped loopback. */
export function isLoopbackAddress(host: string): boolean {
  if (isIPv4(host)) return host.startsWith('127.');
  const lower = host.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped?.[1]?.startsWith('127.') === true;
}

/**
 * Refuses to serve on a non-loopback `host` without an auth token (`doing`: what would be served,
 * e.g. "listen", "serve /metrics"): anyone on the network could otherwise use it.
 */
export function requireTokenOffLoopback(host: string, hasToken: boolean, doing: string): void {
  if (hasToken || isLoopbackAddress(host)) return;
  throw new ExecError(
    'unsupported',
    `refusing to ${doing} on non-loopback address ${host} without an auth token; ` +
      'pass --auth-token-file or set EXECD_AUTH_TOKEN',
  );
}
