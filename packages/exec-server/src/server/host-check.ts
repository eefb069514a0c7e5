import { isIP } from 'node:net';

/**
 * Status of a request whose `Host` header names this server under a name it does not answer to
 * (421 Misdirected Request, RFC 9110 §15.5.20): what a DNS-rebinding page gets.
 */
export const MISDIRECTED_REQUEST_STATUS = 421;

/**
 * The host name of a `Host` header (`name`, `name:port`, `1.2.3.4:port`, `[::1]:port`),
 * lower-cased, without brackets, port or one trailing dot; undefined when it is malformed.
 */
export function hostNameOf(hostHeader: string): string | undefined {
  const header = hostHeader.trim().toLowerCase();
  let name: string;
  let port: string | undefined;
  if (header.startsWith('[')) {
    const close = header.indexOf(']');
    if (close < 0) return undefined;
    name = header.slice(1, close);
    const rest = header.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    port = rest === '' ? undefined : rest.slice(1);
    if (isIP(name) !== 6) return undefined;
  } else {
    const colon = header.indexOf(':');
    name = colon < 0 ? header : header.slice(0, colon);
    port = colon < 0 ? undefined : header.slice(colon + 1);
  }
  if (port !== undefined && !/^[0-9]{1,5}$/.test(port)) return undefined;
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || !/^[a-z0-9._:-]+$/.test(name)) return undefined;
  return name;
}

/**
 * True when a request with this `Host` header may be served (one rule for the WebSocket upgrade
 * and every plain HTTP route). DNS rebinding points a name the attacker owns at 127.0.0.1, so
 * that a web page reads this server as its own origin: the browser then sends the attacker's
 * name as `Host`. Accepted are therefore only names that cannot be rebound:
 *
 * - IP literals (a page reaching an IP literal is cross-origin to it, and never reads the answer);
 * - `localhost` and `*.localhost` (RFC 6761: browsers resolve them to loopback themselves);
 * - the configured `allowedHosts`: an exact name, or `.example.com` for that name and every
 *   name under it (a Kubernetes Service name, a reverse proxy's name).
 *
 * A missing or malformed header is refused: every HTTP/1.1 client sends one.
 */
export function isAllowedHost(hostHeader: string | undefined, allowedHosts: readonly string[]): boolean {
  if (hostHeader === undefined) return false;
  const name = hostNameOf(hostHeader);
  if (name === undefined) return false;
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return allowedHosts.some((entry) => {
    const allowed = entry.trim().toLowerCase().replace(/\.$/, '');
    if (allowed.startsWith('.')) return name === allowed.slice(1) || name.endsWith(allowed);
    return name === allowed;
  });
}
