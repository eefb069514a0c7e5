import { ExecError, type Logger, NOOP_LOGGER, RpcError } from '@execd/protocol';
import { TRUSTED_SYSTEM_DIRS, trustedExecutable } from '@execd/pty-utils';
import { bridgeEndpointOf } from '../internal/bridge-endpoint.ts';
import type { NetworkProxy } from '../network-proxy.ts';
import { BRIDGE_DIR_FD, type BridgeListener } from './bridge-config.ts';
import { BridgeProcess } from './bridge-process.ts';
import { defaultBridgeScript } from './bridge-script.ts';
import { type BridgeHelpers, launchBridge } from './launch-bridge.ts';
import type { NetworkBridge } from './network-bridge.ts';

/** Port of the HTTP proxy inside the sandbox (the conventional proxy port, as the original's default). */
export const DEFAULT_BRIDGE_HTTP_PORT = 3128;
/** Port of the SOCKS5 proxy inside the sandbox (the conventional SOCKS port). */
export const DEFAULT_BRIDGE_SOCKS_PORT = 1080;
/** How long the bridge may take to listen; generous because two cores are shared with other work. */
export const BRIDGE_START_TIMEOUT_MS = 10_000;

/** Options for `startBridge`. */
export interface StartBridgeOptions {
  /** The proxy the bridge forwards to (its unix sockets and `policy.loopbackPorts`). */
  readonly proxy: NetworkProxy;
  /** HTTP proxy port inside the sandbox (default 3128; moved up if it is a loopback port). */
  readonly httpPort?: number | undefined;
  /** SOCKS5 port inside the sandbox (default 1080; moved up if it is a loopback port). */
  readonly socksPort?: number | undefined;
  /**
   * Create the namespace inside a new user namespace and enter it with `nsenter --user`
   * (needed without CAP_SYS_ADMIN). Default: not as root, falling back to it when root lacks
   * CAP_SYS_ADMIN (containers); always for other users.
   */
  readonly userNamespace?: boolean | undefined;
  /** The bridge script (default: `dist/bridge.js` of this package). */
  readonly bridgeScript?: string | undefined;
  /** The node binary that runs the bridge (default `process.execPath`, never looked up on PATH). */
  readonly nodePath?: string | undefined;
  /** Default `BRIDGE_START_TIMEOUT_MS`. */
  readonly startTimeoutMs?: number | undefined;
  readonly logger?: Logger | undefined;
}

function pickPort(wanted: number, taken: ReadonlySet<number>): number {
  let port = wanted;
  while (taken.has(port)) port++;
  if (port > 65535) throw new RpcError('invalidParams', `no free bridge port at or above ${wanted}`);
  return port;
}

const TRUSTED_DIRS_TEXT = `${TRUSTED_SYSTEM_DIRS.join(', ')} (or a root-owned /usr/local/{sbin,bin})`;

async function required(name: string, pkg: string): Promise<string> {
  const path = await trustedExecutable(name);
  if (path === undefined) {
    throw new ExecError(
      'spawnFailed',
      `${name} not found in ${TRUSTED_DIRS_TEXT}: the managed network needs ${pkg}`,
    );
  }
  return path;
}

/** Every helper the launch runs, from trusted system folders only (never `$PATH`; cached). */
async function bridgeHelpers(): Promise<BridgeHelpers & { readonly nsenter: string }> {
  const [unshare, nsenter, sh, ip, ifconfig] = await Promise.all([
    required('unshare', 'util-linux (unshare)'),
    required('nsenter', 'util-linux (nsenter)'),
    required('sh', 'a POSIX shell'),
    trustedExecutable('ip'),
    trustedExecutable('ifconfig'),
  ]);
  if (ip === undefined && ifconfig === undefined) {
    throw new ExecError(
      'spawnFailed',
      `neither ip (iproute2) nor ifconfig found in ${TRUSTED_DIRS_TEXT}: the managed network needs one`,
    );
  }
  return { unshare, nsenter, sh, ip, ifconfig };
}

/**
 * Creates a fresh network namespace held by the bridge process (`unshare --net`, plus a user
 * namespace when not root), brings up its loopback interface, and starts the bridge in it:
 * 127.0.0.1:`httpPort` leads to the proxy's HTTP bridge socket, 127.0.0.1:`socksPort` to its
 * SOCKS5 bridge socket, and each loopback port P to the host's 127.0.0.1:P through the proxy.
 * Helpers come from system folders only (never `$PATH`); the bridge gets the proxy's greeting
 * secret on stdin and its socket folder as an open fd, and forwards nothing to a socket that did
 * not greet with that secret. Resolves once every listener is ready, so a command started
 * afterwards (behind `bridge.prefixArgv`, with `bridge.env`) never races the bridge. Fails with
 * `ExecError('spawnFailed')` naming the cause (missing util-linux, no namespaces...); the proxy
 * stays the caller's either way.
 */
export async function startBridge(options: StartBridgeOptions): Promise<NetworkBridge> {
  const logger = options.logger ?? NOOP_LOGGER;
  const { proxy } = options;
  if (proxy.closed) throw new ExecError('spawnFailed', 'the network proxy is closed');
  const loopbackPorts = proxy.policy.loopbackPorts;
  const taken = new Set(loopbackPorts);
  const httpPort = pickPort(options.httpPort ?? DEFAULT_BRIDGE_HTTP_PORT, taken);
  taken.add(httpPort);
  const socksPort = pickPort(options.socksPort ?? DEFAULT_BRIDGE_SOCKS_PORT, taken);
  const endpoint = bridgeEndpointOf(proxy);
  if (endpoint === undefined)
    throw new ExecError('spawnFailed', 'not a network proxy from startNetworkProxy');
  const helpers = await bridgeHelpers();
  const script = options.bridgeScript ?? defaultBridgeScript();
  if (script === undefined)
    throw new ExecError('spawnFailed', 'dist/bridge.js not found: build @execd/network-proxy');
  // Through the folder fd the bridge inherits: the folder is never looked up by name again.
  const viaDirFd = (name: string): string => `/proc/self/fd/${BRIDGE_DIR_FD}/${name}`;
  const httpPath = viaDirFd(endpoint.httpSocketName);
  const listeners: BridgeListener[] = [
    { port: httpPort, target: { kind: 'unix', path: httpPath } },
    { port: socksPort, target: { kind: 'unix', path: viaDirFd(endpoint.socksSocketName) } },
    ...loopbackPorts.map((port) => ({ port, target: { kind: 'tunnel', path: httpPath, port } }) as const),
  ];
  // Root creates a plain network namespace; without CAP_SYS_ADMIN (non-root, or root in a
  // container) a user namespace is needed. Unless told, root falls back to the latter.
  const isRoot = process.getuid?.() === 0;
  const modes =
    options.userNamespace !== undefined ? [options.userNamespace] : isRoot ? [false, true] : [true];
  const failures: string[] = [];
  for (const userNamespace of modes) {
    try {
      const launched = await launchBridge({
        helpers,
        userNamespace,
        nodePath: options.nodePath ?? process.execPath,
        script,
        config: { listeners },
        socketDir: endpoint.socketDir,
        secret: endpoint.secret,
        startTimeoutMs: options.startTimeoutMs ?? BRIDGE_START_TIMEOUT_MS,
      });
      logger.debug('network bridge ready', {
        pid: launched.child.pid,
        httpPort,
        socksPort,
        loopbackPorts,
        userNamespace,
      });
      return new BridgeProcess({
        launched,
        httpPort,
        socksPort,
        loopbackPorts,
        nsenter: helpers.nsenter,
        userNamespace,
        logger,
      });
    } catch (error) {
      failures.push((error as Error).message);
    }
  }
  throw new ExecError('spawnFailed', `network bridge did not start: ${failures.join('; then: ')}`);
}
