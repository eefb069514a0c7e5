import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { type Logger, NOOP_LOGGER, RpcError } from '@execd/protocol';
import type { NetworkDenial } from '@execd/protocol/contract';
import { BRIDGE_SECRET_BYTES } from './bridge/bridge-config.ts';
import {
  DEFAULT_DECIDER_TIMEOUT_MS,
  DeciderCache,
  type NetworkDecider,
  validateDeciderTimeout,
} from './decider.ts';
import { registerBridgeEndpoint } from './internal/bridge-endpoint.ts';
import { DecisionLog } from './internal/decision-log.ts';
import { Gate } from './internal/gate.ts';
import { prepareSocketDir } from './internal/socket-dir.ts';
import { NetworkPolicy, type NetworkPolicyOptions, validatePorts } from './policy/network-policy.ts';
import type { NetworkDecisionRecord } from './records.ts';
import { type NetworkResolver, systemResolver } from './resolver.ts';
import { HttpProxy } from './server/http-proxy.ts';
import { closeServer, greetOnConnect, listen, type ProxyTcpAddress, tcpAddressOf } from './server/listen.ts';
import { Socks5Proxy } from './server/socks5-proxy.ts';

/**
 * How long the proxy waits for an upstream TCP connection. Matches common client defaults
 * (curl has none, npm 30 s); a dead host is reported as 502 / SOCKS "host unreachable".
 */
export const UPSTREAM_CONNECT_TIMEOUT_MS = 30_000;

/** A SOCKS5 client that has not completed its handshake in this long is dropped (idle-socket bound). */
export const SOCKS_HANDSHAKE_TIMEOUT_MS = 30_000;

/** TCP listeners (tests, clients outside a sandbox) bind loopback only, on a free port. */
const LOOPBACK_ANY_PORT: ProxyTcpAddress = { host: '127.0.0.1', port: 0 };

/** Unix socket paths longer than this do not fit `sockaddr_un.sun_path` (108 bytes incl. NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** The bridge's sockets: like `http.sock`/`socks.sock`, but they greet with the proxy's secret. */
const BRIDGE_HTTP_SOCKET = 'http-bridge.sock';
const BRIDGE_SOCKS_SOCKET = 'socks-bridge.sock';

/** Options for `startNetworkProxy`: the policy plus where and how to listen. */
export interface NetworkProxyOptions extends NetworkPolicyOptions {
  /**
   * Asked about hosts no pattern matches; its answers are cached per proxy and `host:port`.
   * Without one, such hosts are denied (`notAllowed`).
   */
  readonly decider?: NetworkDecider | undefined;
  /** How long a connection waits for the decider (default 30 000 ms). Must be non-zero. */
  readonly deciderTimeoutMs?: number | undefined;
  /** Name resolution for upstream connections (default: the host's `getaddrinfo`). */
  readonly resolver?: NetworkResolver | undefined;
  readonly logger?: Logger | undefined;
  /**
   * Folder for the unix sockets (`http.sock`, `socks.sock` and the bridge's two). It must not lie
   * under a temp folder (/tmp, /var/tmp, /dev/shm, `os.tmpdir()`, `$TMPDIR`): sandboxed commands
   * can write there (`RpcError('invalidParams')`). Default: a fresh 0700 folder in `/run/execd`
   * (root), `$XDG_RUNTIME_DIR/execd` or `~/.cache/execd`, removed on close.
   */
  readonly socketDir?: string | undefined;
  /**
   * Ports that are never reached on a local address (loopback, link-local, this host's interface
   * addresses), whatever the allow lists and loopbackPorts say, in addition to every port this
   * process itself listens on (always refused). For servers of the executor that live in other
   * processes. Default none.
   */
  readonly reservedLocalPorts?: readonly number[] | undefined;
  /** Also listen on 127.0.0.1 TCP ports (for tests and for clients outside a sandbox). Default false. */
  readonly tcp?: boolean | undefined;
  /** Upstream connect timeout (default `UPSTREAM_CONNECT_TIMEOUT_MS`). */
  readonly connectTimeoutMs?: number | undefined;
}

/**
 * The managed-network proxy, running in the executor's process (outside any sandbox): an HTTP
 * forward/`CONNECT` proxy and a SOCKS5 proxy on unix sockets (optionally also loopback TCP),
 * enforcing one policy and recording every decision. Create it with `startNetworkProxy`.
 */
export class NetworkProxy implements AsyncDisposable {
  /** Unix socket of the HTTP proxy (forward + `CONNECT`). */
  readonly httpSocketPath: string;
  /** Unix socket of the SOCKS5 proxy. */
  readonly socksSocketPath: string;
  /**
   * The folder holding every socket of this proxy. Private to the executor; sandboxes should have
   * it masked (the sandboxing package mounts an empty tmpfs over it).
   */
  readonly socketDir: string;
  /** Loopback TCP address of the HTTP proxy, when `tcp` was requested. */
  readonly httpAddress: ProxyTcpAddress | undefined;
  /** Loopback TCP address of the SOCKS5 proxy, when `tcp` was requested. */
  readonly socksAddress: ProxyTcpAddress | undefined;
  /** The compiled policy (the bridge reads `loopbackPorts` from it). */
  readonly policy: NetworkPolicy;
  readonly #log: DecisionLog;
  readonly #decider: DeciderCache | undefined;
  readonly #servers: readonly Server[];
  readonly #http: HttpProxy;
  readonly #sockets: Set<Socket>;
  readonly #ownedDir: string | undefined;
  readonly #logger: Logger;
  #closing: Promise<void> | undefined;

  private constructor(parts: {
    httpSocketPath: string;
    socksSocketPath: string;
    socketDir: string;
    httpAddress: ProxyTcpAddress | undefined;
    socksAddress: ProxyTcpAddress | undefined;
    policy: NetworkPolicy;
    log: DecisionLog;
    decider: DeciderCache | undefined;
    servers: readonly Server[];
    http: HttpProxy;
    sockets: Set<Socket>;
    ownedDir: string | undefined;
    logger: Logger;
  }) {
    this.httpSocketPath = parts.httpSocketPath;
    this.socksSocketPath = parts.socksSocketPath;
    this.socketDir = parts.socketDir;
    this.httpAddress = parts.httpAddress;
    this.socksAddress = parts.socksAddress;
    this.policy = parts.policy;
    this.#log = parts.log;
    this.#decider = parts.decider;
    this.#servers = parts.servers;
    this.#http = parts.http;
    this.#sockets = parts.sockets;
    this.#ownedDir = parts.ownedDir;
    this.#logger = parts.logger;
  }

  /** Validates the options, listens, and resolves once every listener is ready. */
  static async start(options: NetworkProxyOptions = {}): Promise<NetworkProxy> {
    const logger = options.logger ?? NOOP_LOGGER;
    const policy = new NetworkPolicy(options);
    const deciderTimeoutMs = validateDeciderTimeout(options.deciderTimeoutMs ?? DEFAULT_DECIDER_TIMEOUT_MS);
    const connectTimeoutMs = options.connectTimeoutMs ?? UPSTREAM_CONNECT_TIMEOUT_MS;
    if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs <= 0) {
      throw new RpcError(
        'invalidParams',
        `connectTimeoutMs must be a positive integer, got ${connectTimeoutMs}`,
      );
    }
    const reservedPorts = validatePorts('reservedLocalPorts', options.reservedLocalPorts ?? []);
    const socketDir = await prepareSocketDir(options.socketDir);
    const ownedDir = socketDir.owned ? socketDir.path : undefined;
    const dir = socketDir.path;
    const httpSocketPath = join(dir, 'http.sock');
    const socksSocketPath = join(dir, 'socks.sock');
    const bridgePaths = [join(dir, BRIDGE_HTTP_SOCKET), join(dir, BRIDGE_SOCKS_SOCKET)] as const;
    if ([socksSocketPath, ...bridgePaths].some((path) => Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)) {
      if (ownedDir) await rm(ownedDir, { recursive: true, force: true });
      throw new RpcError('invalidParams', `socketDir is too long for a unix socket path: ${dir}`);
    }
    const secret = randomBytes(BRIDGE_SECRET_BYTES);
    const log = new DecisionLog(logger);
    const decider = options.decider ? new DeciderCache(options.decider, deciderTimeoutMs, logger) : undefined;
    const gate = new Gate({
      policy,
      decider,
      resolver: options.resolver ?? systemResolver,
      log,
      logger,
      reservedPorts,
    });
    const sockets = new Set<Socket>();
    const track = (socket: Socket): void => {
      if (sockets.has(socket)) return;
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    };
    const http = new HttpProxy({ gate, logger, connectTimeoutMs, track });
    const socks = new Socks5Proxy({
      gate,
      logger,
      connectTimeoutMs,
      handshakeTimeoutMs: SOCKS_HANDSHAKE_TIMEOUT_MS,
      track,
    });
    const servers: Server[] = [];
    let httpAddress: ProxyTcpAddress | undefined;
    let socksAddress: ProxyTcpAddress | undefined;
    try {
      const httpUnix = http.createServer();
      const socksUnix = socks.createServer();
      const httpBridge = http.createServer();
      const socksBridge = socks.createServer();
      greetOnConnect(httpBridge, secret);
      greetOnConnect(socksBridge, secret);
      servers.push(httpUnix, socksUnix, httpBridge, socksBridge);
      await listen(httpUnix, httpSocketPath);
      await listen(socksUnix, socksSocketPath);
      await listen(httpBridge, bridgePaths[0]);
      await listen(socksBridge, bridgePaths[1]);
      if (options.tcp) {
        const httpTcp = http.createServer();
        const socksTcp = socks.createServer();
        servers.push(httpTcp, socksTcp);
        await listen(httpTcp, LOOPBACK_ANY_PORT);
        await listen(socksTcp, LOOPBACK_ANY_PORT);
        httpAddress = tcpAddressOf(httpTcp);
        socksAddress = tcpAddressOf(socksTcp);
      }
    } catch (error) {
      http.close();
      await Promise.all(servers.map(closeServer));
      if (ownedDir) await rm(ownedDir, { recursive: true, force: true });
      throw new RpcError('internal', `network proxy could not listen: ${(error as Error).message}`, {
        cause: error,
      });
    }
    for (const server of servers) {
      // Accept errors (EMFILE...) must not crash the executor: log them, keep serving.
      server.on('error', (error) => logger.warn('network proxy listener error', { error }));
    }
    logger.info('network proxy listening', { socketDir: dir, httpAddress, socksAddress });
    const proxy = new NetworkProxy({
      httpSocketPath,
      socksSocketPath,
      socketDir: dir,
      httpAddress,
      socksAddress,
      policy,
      log,
      decider,
      servers,
      http,
      sockets,
      ownedDir,
      logger,
    });
    registerBridgeEndpoint(proxy, {
      socketDir: dir,
      httpSocketName: BRIDGE_HTTP_SOCKET,
      socksSocketName: BRIDGE_SOCKS_SOCKET,
      secret,
    });
    return proxy;
  }

  /** The retained decisions, oldest first (bounded; see `DECISION_LOG_MAX_ENTRIES`). */
  decisions(): readonly NetworkDecisionRecord[] {
    return this.#log.decisions;
  }

  /** The retained denials, oldest first (bounded). */
  denials(): readonly NetworkDenial[] {
    return this.#log.denials;
  }

  /** Calls `listener` for every decision from now on; dispose the result to stop. */
  onDecision(listener: (record: NetworkDecisionRecord) => void): Disposable {
    return this.#log.onDecision(listener);
  }

  /** Calls `listener` for every denial from now on; dispose the result to stop. */
  onDenial(listener: (denial: NetworkDenial) => void): Disposable {
    return this.#log.onDenial(listener);
  }

  /** Live denials from now on, ending when the proxy closes or `cancelSignal` aborts. */
  watchDenials(options: { readonly cancelSignal?: AbortSignal } = {}): AsyncIterable<NetworkDenial> {
    return this.#log.watchDenials(options.cancelSignal);
  }

  /** Open client and upstream connections right now. */
  get activeConnections(): number {
    return this.#sockets.size;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Stops listening, denies requests still waiting for the decider (`proxyClosed`), destroys every
   * open connection, ends live iterators and removes the socket files. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    this.#decider?.close();
    this.#http.close();
    const closing = Promise.all(this.#servers.map(closeServer));
    // Requests that were waiting for the decider settle in microtasks; let them write their
    // 403 (proxyClosed) before every connection is cut.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const socket of this.#sockets) socket.destroy();
    await closing;
    this.#log.close();
    if (this.#ownedDir) await rm(this.#ownedDir, { recursive: true, force: true });
    else {
      const names = ['http.sock', 'socks.sock', BRIDGE_HTTP_SOCKET, BRIDGE_SOCKS_SOCKET];
      await Promise.all(names.map((name) => rm(join(this.socketDir, name), { force: true })));
    }
    this.#logger.info('network proxy closed', { httpSocketPath: this.httpSocketPath });
  }
}

/** Starts a proxy (see `NetworkProxy`); throws `RpcError('invalidParams')` for a bad policy or timeout. */
export function startNetworkProxy(options: NetworkProxyOptions = {}): Promise<NetworkProxy> {
  return NetworkProxy.start(options);
}
