import { type EnvironmentInfo, ExecError, type Logger, MAX_FRAME_BYTES, NOOP_LOGGER } from '@execd/protocol';
import type { LocalProcessTableOptions } from '../local/index.ts';
import { BearerTokenVerifier } from './auth.ts';
import { localEnvironmentInfo } from './environment-info.ts';
import type { Readiness } from './http-endpoints.ts';
import { DEFAULT_LISTEN_URL, parseListenUrl, requireTokenOffLoopback } from './listen-url.ts';
import type { LocalPeerCheck } from './local-peer.ts';
import type { ExecServerMetrics } from './metrics.ts';
import { MAX_QUEUED_NOTIFICATION_BYTES } from './notification-gate.ts';
import { parseDispatchMode } from './request-lanes.ts';
import { createServerCore } from './server-core.ts';
import {
  type CreateProcessTable,
  DETACHED_SESSION_TTL_MS,
  RESUME_LIVENESS_TIMEOUT_MS,
} from './session-registry.ts';
import { StdioTransport } from './stdio-transport.ts';
import { listenWebSocket } from './websocket-listener.ts';
import { WEBSOCKET_KEEPALIVE_INTERVAL_MS } from './websocket-transport.ts';

/** Options of {@link startExecServer}. Every duration and limit has the original's default. */
export interface ExecServerOptions {
  /** `ws://IP:PORT` (default `ws://127.0.0.1:0`), `stdio` or `stdio://`. */
  readonly listen?: string;
  /** `--concurrent-requests`: 1 (default) runs requests inline; N >= 2 gives each lane N permits. */
  readonly concurrentRequests?: number | string;
  /** Require `Authorization: Bearer <token>` on the WebSocket upgrade. Needed for non-loopback hosts. */
  readonly authToken?: string | undefined;
  /**
   * Host names the server answers to besides IP literals, `localhost` and `*.localhost`: an exact
   * name, or `.example.com` for it and every name under it. A request whose `Host` is none of
   * these gets 421 (DNS-rebinding protection), on the upgrade and every HTTP route. Default none.
   */
  readonly allowedHosts?: readonly string[] | undefined;
  /**
   * Connections from this machine are attributed to a process (Linux): `sandboxed-only`
   * (default) refuses sandboxed processes, `strict` also loopback peers that cannot be attributed
   * (a client in a pid namespace this server cannot see: a sidecar container, a host process when
   * the server runs in a container with the host's network), `off` none. See `LocalPeerCheck`.
   */
  readonly localPeerCheck?: LocalPeerCheck | undefined;
  /**
   * How long attributing one connection may take (default `PEER_ATTRIBUTION_TIMEOUT_MS`, 5 s);
   * a connection not attributed by then is refused.
   */
  readonly peerAttributionTimeoutMs?: number | undefined;
  readonly logger?: Logger;
  /** Builds each new session's process table (default a `LocalProcessTable` per session). */
  readonly createProcessTable?: CreateProcessTable;
  /**
   * Options of the default per-session `LocalProcessTable` (retention, spawner, the managed
   * network's resolver and bridge...). Its `network/policyRequest`s go to the session's client.
   */
  readonly processTable?: Omit<LocalProcessTableOptions, 'networkPolicyRequester'> | undefined;
  /** How long a detached session waits for a resume (default 30 s). */
  readonly detachedSessionTtlMs?: number;
  /**
   * A resume refused because the session is attached (-32010) pings the holding connection,
   * which is dropped unless it answers within this long (default 2 s; 0 = no check).
   */
  readonly resumeLivenessTimeoutMs?: number;
  /** Interval between WebSocket pings (default 30 s); 0 disables keepalive. */
  readonly keepaliveIntervalMs?: number;
  /** Largest inbound frame or stdio line in bytes (default 64 MiB). */
  readonly maxFrameBytes?: number;
  /**
   * Hard cap on a connection's outbound backlog, past which notifications are dropped (default
   * 16 MiB). Above a quarter of it the session's processes stop being read (their children block),
   * and they are read again once it drained to a sixteenth, so a client that reads loses nothing.
   */
  readonly maxQueuedNotificationBytes?: number;
  /** Describes this executor (default {@link localEnvironmentInfo}). */
  readonly environmentInfo?: () => EnvironmentInfo;
  /**
   * The executor's own environment, where `http/request` looks up `valueEnvVar` and
   * `environmentConfig/read` finds `CODEX_HOME`/`HOME` (default `process.env`).
   */
  readonly executorEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /** Folder of the system-wide layers of `environmentConfig/read` (default `/etc/codex`). */
  readonly systemConfigDir?: string | undefined;
  /** Streams of the stdio transport (default the process's stdin/stdout). */
  readonly stdio?: { readonly input: NodeJS.ReadableStream; readonly output: NodeJS.WritableStream };
  /** What `GET /readyz` answers (default: always ready); e.g. 503 while the sandbox does not work. */
  readonly readiness?: (() => Readiness) | undefined;
}

/** A running exec-server. */
export interface RunningExecServer extends AsyncDisposable {
  /** `ws://IP:PORT` with the bound port, or `stdio`. */
  readonly url: string;
  /** This server's Prometheus metrics (also served as `GET /metrics` over WebSocket). */
  readonly metrics: ExecServerMetrics;
  /** Settles once the server stopped: after `close()`, or when the stdio connection ended. */
  readonly closed: Promise<void>;
  /** Stops accepting, closes every connection and terminates every process tree. Idempotent. */
  close(): Promise<void>;
}

function positiveInteger(
  name: string,
  value: number | undefined,
  fallback: number,
  allowZero = false,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ExecError(
      'invalidParams',
      `${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${value}`,
    );
  }
  return value;
}

/**
 * Starts an exec-server: binds (or takes over stdio), and serves sessions until `close()`.
 * Refuses a non-loopback WebSocket address without an auth token.
 */
export async function startExecServer(options: ExecServerOptions = {}): Promise<RunningExecServer> {
  const logger = options.logger ?? NOOP_LOGGER;
  const target = parseListenUrl(options.listen ?? DEFAULT_LISTEN_URL);
  const dispatchMode = parseDispatchMode(options.concurrentRequests ?? 1);
  const maxFrameBytes = positiveInteger('maxFrameBytes', options.maxFrameBytes, MAX_FRAME_BYTES);
  const maxQueuedNotificationBytes = positiveInteger(
    'maxQueuedNotificationBytes',
    options.maxQueuedNotificationBytes,
    MAX_QUEUED_NOTIFICATION_BYTES,
  );
  const keepaliveIntervalMs = positiveInteger(
    'keepaliveIntervalMs',
    options.keepaliveIntervalMs,
    WEBSOCKET_KEEPALIVE_INTERVAL_MS,
    true,
  );
  const detachedTtlMs = positiveInteger(
    'detachedSessionTtlMs',
    options.detachedSessionTtlMs,
    DETACHED_SESSION_TTL_MS,
  );
  const resumeLivenessTimeoutMs = positiveInteger(
    'resumeLivenessTimeoutMs',
    options.resumeLivenessTimeoutMs,
    RESUME_LIVENESS_TIMEOUT_MS,
    true,
  );
  const verifier = options.authToken === undefined ? undefined : new BearerTokenVerifier(options.authToken);
  if (target.kind === 'websocket') requireTokenOffLoopback(target.host, verifier !== undefined, 'listen');

  const allowedHosts = [...(options.allowedHosts ?? [])];
  for (const name of allowedHosts) {
    if (!/^\.?[A-Za-z0-9._-]+$/.test(name.trim())) {
      throw new ExecError('invalidParams', `allowedHosts: \`${name}\` is not a host name (or \`.domain\`)`);
    }
  }
  const localPeerCheck = options.localPeerCheck ?? 'sandboxed-only';
  if (!['strict', 'sandboxed-only', 'off'].includes(localPeerCheck)) {
    throw new ExecError(
      'invalidParams',
      `localPeerCheck must be strict, sandboxed-only or off, got ${String(localPeerCheck)}`,
    );
  }

  const { metrics, registry, open } = await createServerCore(options, {
    logger,
    dispatchMode,
    detachedTtlMs,
    resumeLivenessTimeoutMs,
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;

  if (target.kind === 'stdio') {
    const transport = new StdioTransport({
      input: options.stdio?.input ?? process.stdin,
      output: options.stdio?.output ?? process.stdout,
      maxFrameBytes,
      maxQueuedNotificationBytes,
      logger,
    });
    logger.info('exec-server listening on stdio');
    const processor = open(transport);
    // Stdio serves exactly one connection: its end (EOF included) shuts everything down.
    const shutdown = (): Promise<void> => {
      closing ??= (async () => {
        transport.close('server shutting down');
        await processor.done;
        await registry.close();
        logger.info('exec-server shutdown complete');
        resolveClosed();
      })();
      return closing;
    };
    void processor.done.then(shutdown);
    return { url: 'stdio', metrics, closed, close: shutdown, [Symbol.asyncDispose]: shutdown };
  }

  let listener: Awaited<ReturnType<typeof listenWebSocket>>;
  try {
    listener = await listenWebSocket({
      host: target.host,
      port: target.port,
      verifier,
      maxFrameBytes,
      keepaliveIntervalMs,
      maxQueuedNotificationBytes,
      logger,
      metrics,
      allowedHosts,
      localPeerCheck,
      peerAttributionTimeoutMs: options.peerAttributionTimeoutMs,
      openConnection: open,
      readiness: options.readiness,
    });
  } catch (error) {
    await registry.close();
    throw error;
  }
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await listener.close();
      } finally {
        await registry.close();
        logger.info('exec-server shutdown complete');
        resolveClosed();
      }
    })();
    return closing;
  };
  return { url: listener.url, metrics, closed, close: shutdown, [Symbol.asyncDispose]: shutdown };
}
