/**
 * The contract between `startBridge` (executor side) and the bridge process (`dist/bridge.js`),
 * which receives its config as one JSON argument, the proxy's secret as the first line of its
 * stdin (hex), the proxy's socket folder as fd `BRIDGE_DIR_FD`, and prints `BRIDGE_READY_LINE`
 * once listening. Kept free of imports so the bridge bundle stays tiny and starts fast.
 */

/**
 * Length of the secret the proxy writes first on every bridge connection. 32 random bytes: not
 * guessable, and short enough to arrive in the first read.
 */
export const BRIDGE_SECRET_BYTES = 32;

/**
 * The bridge's file descriptor for the proxy's socket folder (opened by the executor and
 * inherited). Socket paths in the config go through it (`/proc/self/fd/3/http-bridge.sock`), so
 * the folder is never looked up by name again after the executor opened it.
 */
export const BRIDGE_DIR_FD = 3;

/**
 * How long the bridge waits for the proxy's secret on a new connection before giving up on it.
 * The proxy writes it as soon as it accepts, so only a peer that is not the proxy waits this long.
 */
export const BRIDGE_GREETING_TIMEOUT_MS = 10_000;

/** Where one bridge port leads. */
export type BridgeTarget =
  /** Splice each connection to this unix socket (a proxy listener). */
  | { readonly kind: 'unix'; readonly path: string }
  /** Open a `CONNECT 127.0.0.1:port` tunnel through the HTTP proxy socket at `path` (loopbackPorts). */
  | { readonly kind: 'tunnel'; readonly path: string; readonly port: number };

/** One port the bridge listens on inside the sandbox's network namespace. */
export interface BridgeListener {
  readonly port: number;
  readonly target: BridgeTarget;
}

/** The bridge's whole configuration. */
export interface BridgeConfig {
  readonly listeners: readonly BridgeListener[];
}

/** The line the bridge prints on stdout once every listener is ready. */
export const BRIDGE_READY_LINE = 'execd-network-bridge-ready';

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** Parses and checks the JSON argument; throws a TypeError naming the problem. */
export function parseBridgeConfig(json: string): BridgeConfig {
  const raw = JSON.parse(json) as { listeners?: unknown };
  if (!Array.isArray(raw.listeners) || raw.listeners.length === 0)
    throw new TypeError('bridge config: no listeners');
  const listeners = raw.listeners.map((entry: unknown, i): BridgeListener => {
    const { port, target } = (entry ?? {}) as { port?: unknown; target?: Record<string, unknown> };
    if (!isPort(port)) throw new TypeError(`bridge config: listeners[${i}].port is not a port`);
    if (typeof target?.path !== 'string' || target.path === '')
      throw new TypeError(`bridge config: listeners[${i}] has no socket path`);
    if (target.kind === 'unix') return { port, target: { kind: 'unix', path: target.path } };
    if (target.kind === 'tunnel' && isPort(target.port)) {
      return { port, target: { kind: 'tunnel', path: target.path, port: target.port } };
    }
    throw new TypeError(`bridge config: listeners[${i}].target is not valid`);
  });
  return { listeners };
}
