/**
 * What a bridge needs from its proxy and callers have no use for: the greeting secret and the
 * names of the bridge sockets. Kept off the public `NetworkProxy` surface, on a non-enumerable
 * `Symbol.for` property, so that two copies of this package (one starting the proxy, the other the
 * bridge) still find it, while it never shows up in logs, JSON or object dumps.
 */
export interface BridgeEndpoint {
  /** The proxy's socket folder (the bridge gets it as an open fd). */
  readonly socketDir: string;
  /** File name, inside `socketDir`, of the HTTP proxy socket that greets with the secret. */
  readonly httpSocketName: string;
  /** File name, inside `socketDir`, of the SOCKS5 proxy socket that greets with the secret. */
  readonly socksSocketName: string;
  /** Written by the proxy first on every bridge-socket connection; the bridge checks it. */
  readonly secret: Buffer;
}

const BRIDGE_ENDPOINT = Symbol.for('@execd/network-proxy/bridgeEndpoint');

/** Attaches `endpoint` to `proxy` (called once by the proxy itself). */
export function registerBridgeEndpoint(proxy: object, endpoint: BridgeEndpoint): void {
  Object.defineProperty(proxy, BRIDGE_ENDPOINT, { value: Object.freeze(endpoint), enumerable: false });
}

/** The bridge endpoint of `proxy`, or undefined for an object that is not a started proxy. */
export function bridgeEndpointOf(proxy: object): BridgeEndpoint | undefined {
  return (proxy as { [BRIDGE_ENDPOINT]?: BridgeEndpoint })[BRIDGE_ENDPOINT];
}
