import { type ChildProcess, spawn } from 'node:child_process';
import { ExecError, RpcError } from '@execd/protocol';
import { type Logger, NOOP_LOGGER } from '../logger.ts';
import type { NetworkProxy } from '../network-proxy.ts';
import { BRIDGE_READY_LINE, type BridgeConfig, type BridgeListener } from './bridge-config.ts';
import { shareBridgeNetwork } from './bwrap-argv.ts';
import { defaultBridgeScript, findExecutable } from './executables.ts';
import { proxyEnvironment } from './proxy-env.ts';

/** Port of the HTTP proxy inside the sandbox (the conventional proxy port, as the original's default). */
export const DEFAULT_BRIDGE_HTTP_PORT = 3128;
/** Port of the SOCKS5 proxy inside the sandbox (the conventional SOCKS port). */
export const DEFAULT_BRIDGE_SOCKS_PORT = 1080;
/** How long the bridge may take to listen; generous because two cores are shared with other work. */
export const BRIDGE_START_TIMEOUT_MS = 10_000;
/** After SIGTERM, how long `close()` waits before SIGKILL. The bridge exits at once on SIGTERM. */
const BRIDGE_KILL_GRACE_MS = 2_000;
/** Bytes of the bridge's stderr kept for error messages. */
const STDERR_KEEP_BYTES = 4_096;

/**
 * Brings up `lo` in the new namespace (a fresh network namespace has it down), then execs the
 * bridge. Positional parameters: the node binary, the bridge script, the JSON config.
 */
const HOLDER_SCRIPT =
  'ip link set dev lo up 2>/dev/null || ifconfig lo up 2>/dev/null || ' +
  '{ echo "cannot bring up the loopback interface (needs ip from iproute2, or ifconfig)" >&2; exit 97; }; exec "$@"';

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
   * (needed without CAP_SYS_ADMIN). Default: true unless running as root.
   */
  readonly userNamespace?: boolean | undefined;
  /** The bridge script (default: `dist/bridge.js` of this package). */
  readonly bridgeScript?: string | undefined;
  /** The node binary that runs the bridge (default `process.execPath`). */
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

function required(name: string, pkg: string): string {
  const path = findExecutable(name);
  if (path === undefined)
    throw new ExecError('spawnFailed', `${name} not found: the managed network needs ${pkg}`);
  return path;
}

/**
 * A running bridge: a network namespace with the proxy ports (and loopbackPorts) on its
 * 127.0.0.1, forwarding to the proxy. Run the command inside it with `wrapArgv` and `env`.
 */
export class NetworkBridge implements AsyncDisposable {
  /** Pid of the bridge process (also the namespace's holder). */
  readonly pid: number;
  /** HTTP proxy port on 127.0.0.1 inside the namespace. */
  readonly httpPort: number;
  /** SOCKS5 port on 127.0.0.1 inside the namespace. */
  readonly socksPort: number;
  /** Host loopback ports mirrored into the namespace. */
  readonly loopbackPorts: readonly number[];
  /** Variables to add to the command's environment (see `proxyEnvironment`). */
  readonly env: Readonly<Record<string, string>>;
  /** Resolves when the bridge process has exited (never rejects). */
  readonly exited: Promise<void>;
  readonly #child: ChildProcess;
  readonly #nsenter: string;
  readonly #userNamespace: boolean;
  #closing: Promise<void> | undefined;

  /** @internal Use `startBridge`. */
  constructor(parts: {
    child: ChildProcess;
    exited: Promise<void>;
    httpPort: number;
    socksPort: number;
    loopbackPorts: readonly number[];
    nsenter: string;
    userNamespace: boolean;
  }) {
    this.#child = parts.child;
    this.pid = parts.child.pid ?? -1;
    this.exited = parts.exited;
    this.httpPort = parts.httpPort;
    this.socksPort = parts.socksPort;
    this.loopbackPorts = parts.loopbackPorts;
    this.#nsenter = parts.nsenter;
    this.#userNamespace = parts.userNamespace;
    this.env = Object.freeze(proxyEnvironment({ httpPort: parts.httpPort, socksPort: parts.socksPort }));
  }

  /**
   * The argv that runs `argv` inside the bridge's network namespace:
   * `nsenter --target PID --net [--user --preserve-credentials] -- <argv>`, where a bwrap argv has
   * `--unshare-net` removed (see `shareBridgeNetwork`) so the sandbox keeps this namespace.
   */
  wrapArgv(argv: readonly string[]): string[] {
    if (argv.length === 0) throw new RpcError('invalidParams', 'argv must not be empty');
    const namespaces = this.#userNamespace ? ['--user', '--net', '--preserve-credentials'] : ['--net'];
    return [this.#nsenter, '--target', String(this.pid), ...namespaces, '--', ...shareBridgeNetwork(argv)];
  }

  /** Stops the bridge (SIGTERM, then SIGKILL after a grace period) and waits for it. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill('SIGTERM');
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), BRIDGE_KILL_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }
}

/**
 * Creates a fresh network namespace held by the bridge process (`unshare --net`, plus a user
 * namespace when not root), brings up its loopback interface, and starts the bridge in it:
 * 127.0.0.1:`httpPort` leads to the proxy's HTTP socket, 127.0.0.1:`socksPort` to its SOCKS5
 * socket, and each loopback port P to the host's 127.0.0.1:P through the proxy. Resolves once
 * every listener is ready, so a command started afterwards never races the bridge.
 * Fails with `ExecError('spawnFailed')` naming the cause (missing util-linux, no namespaces...).
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
  const userNamespace = options.userNamespace ?? process.getuid?.() !== 0;
  const unshare = required('unshare', 'util-linux (unshare)');
  const nsenter = required('nsenter', 'util-linux (nsenter)');
  const script = options.bridgeScript ?? defaultBridgeScript();
  if (script === undefined)
    throw new ExecError('spawnFailed', 'dist/bridge.js not found: build @execd/network-proxy');
  const listeners: BridgeListener[] = [
    { port: httpPort, target: { kind: 'unix', path: proxy.httpSocketPath } },
    { port: socksPort, target: { kind: 'unix', path: proxy.socksSocketPath } },
    ...loopbackPorts.map(
      (port) => ({ port, target: { kind: 'tunnel', path: proxy.httpSocketPath, port } }) as const,
    ),
  ];
  const config: BridgeConfig = { listeners };
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const namespaceArgs = userNamespace
    ? [`--map-user=${uid}`, `--map-group=${gid}`, '--net', '--keep-caps']
    : ['--net'];
  const argv = [...namespaceArgs, '--', '/bin/sh', '-c', HOLDER_SCRIPT, 'sh'];
  argv.push(options.nodePath ?? process.execPath, script, JSON.stringify(config));
  const child = spawn(unshare, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  // 'close', not 'exit': the stdio pipes are closed too, so nothing of the bridge stays open.
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve(); // never started: no 'close' follows
    });
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_KEEP_BYTES);
  });
  child.stdin?.on('error', () => {});
  try {
    await waitReady(child, options.startTimeoutMs ?? BRIDGE_START_TIMEOUT_MS);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    const detail = stderr.trim() || (error as Error).message;
    throw new ExecError('spawnFailed', `network bridge did not start: ${detail}`, { cause: error });
  }
  logger.debug('network bridge ready', { pid: child.pid, httpPort, socksPort, loopbackPorts, userNamespace });
  return new NetworkBridge({ child, exited, httpPort, socksPort, loopbackPorts, nsenter, userNamespace });
}

function waitReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('close', onExit);
      child.off('error', onError);
    };
    const onData = (text: string): void => {
      stdout += text;
      if (!stdout.includes(`${BRIDGE_READY_LINE}\n`)) return;
      cleanup();
      // Nothing else comes on stdout; keep draining it so the pipe never fills.
      child.stdout?.resume();
      resolve();
    };
    const onExit = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(new Error(`exited with ${signal ?? `code ${code}`}`));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', onData);
    // 'close' (after stdio drained) so stderr has arrived when the error is reported.
    child.once('close', onExit);
    child.once('error', onError);
  });
}
