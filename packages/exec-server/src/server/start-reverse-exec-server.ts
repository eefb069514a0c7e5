import { ExecError, MAX_FRAME_BYTES, NOOP_LOGGER } from '@execd/protocol';
import { BearerTokenVerifier } from './auth.ts';
import { type HealthListener, listenHealth, parseHealthListen } from './health-listener.ts';
import type { Readiness } from './http-endpoints.ts';
import { MAX_QUEUED_NOTIFICATION_BYTES } from './notification-gate.ts';
import { parseDispatchMode } from './request-lanes.ts';
import { dialExecHost } from './reverse-dialer.ts';
import { createServerCore } from './server-core.ts';
import type { ExecServerOptions, RunningExecServer } from './start-exec-server.ts';
import { WEBSOCKET_KEEPALIVE_INTERVAL_MS } from './websocket-transport.ts';

/** Options of {@link startReverseExecServer}: the server's options without the listener's. */
export interface ReverseExecServerOptions extends Omit<ExecServerOptions, 'listen' | 'stdio'> {
  /** `ws://` or `wss://` URL of the host's acceptor, dialled (and redialled) by the server. */
  readonly connect: string;
  /** Sent as `Authorization: Bearer <token>` on every dial. */
  readonly connectToken?: string | undefined;
  /** Sent as `X-Execd-Environment-Id` on every dial: the host routes the executor by it. */
  readonly environmentId?: string | undefined;
  /** First pause between dials (default 100 ms), doubling up to `redialMaxDelayMs` (default 5 s). */
  readonly redialInitialDelayMs?: number | undefined;
  readonly redialMaxDelayMs?: number | undefined;
  /**
   * `http://IP:PORT` to serve `GET /readyz` and `GET /metrics` on (the server has no listening
   * socket of its own to serve them). `/readyz` answers 503 while no connection to the host is
   * open, and while `readiness` says not ready. `authToken`, `allowedHosts` and `localPeerCheck`
   * apply to this endpoint only (a non-loopback address needs `authToken`, which `/metrics` then
   * requires).
   */
  readonly healthListen?: string | undefined;
}

/** What {@link startReverseExecServer} returns. */
export interface RunningReverseExecServer extends RunningExecServer {
  /** `http://IP:PORT` of the health endpoint with its bound port, when `healthListen` was given. */
  readonly healthUrl: string | undefined;
}

function checkConnectUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ExecError(
      'invalidParams',
      `invalid --connect URL \`${url}\`; expected ws://HOST:PORT/PATH or wss://…`,
    );
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new ExecError('invalidParams', `invalid --connect URL \`${url}\`; expected a ws:// or wss:// URL`);
  }
}

/**
 * Starts an exec-server that listens nowhere: it dials the host at `connect` and serves the
 * protocol on that socket (the host is the JSON-RPC client), redialling with backoff whenever the
 * socket drops so the host can resume the session within the detached TTL. For executors behind
 * NAT. `close()` stops redialling and terminates every process tree.
 */
export async function startReverseExecServer(
  options: ReverseExecServerOptions,
): Promise<RunningReverseExecServer> {
  checkConnectUrl(options.connect);
  const healthAddress =
    options.healthListen === undefined ? undefined : parseHealthListen(options.healthListen);
  const logger = options.logger ?? NOOP_LOGGER;
  const dispatchMode = parseDispatchMode(options.concurrentRequests ?? 1);
  const { metrics, registry, open } = await createServerCore(options, {
    logger,
    dispatchMode,
    detachedTtlMs: options.detachedSessionTtlMs,
    resumeLivenessTimeoutMs: options.resumeLivenessTimeoutMs,
  });
  const dialer = dialExecHost({
    url: options.connect,
    token: options.connectToken,
    environmentId: options.environmentId,
    maxFrameBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES,
    keepaliveIntervalMs: options.keepaliveIntervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS,
    maxQueuedNotificationBytes: options.maxQueuedNotificationBytes ?? MAX_QUEUED_NOTIFICATION_BYTES,
    logger,
    openConnection: open,
    redialInitialDelayMs: options.redialInitialDelayMs,
    redialMaxDelayMs: options.redialMaxDelayMs,
  });
  logger.info('exec-server dialling the host', { url: options.connect });
  const connectionReadiness = (): Readiness => {
    const { connected, lastError } = dialer.state();
    if (!connected)
      return {
        ready: false,
        reason: `not connected to the host${lastError === undefined ? '' : ` (last dial: ${lastError})`}`,
      };
    return options.readiness?.() ?? { ready: true };
  };
  let health: HealthListener | undefined;
  try {
    health =
      healthAddress === undefined
        ? undefined
        : await listenHealth({
            ...healthAddress,
            verifier:
              options.authToken === undefined ? undefined : new BearerTokenVerifier(options.authToken),
            metrics,
            readiness: connectionReadiness,
            allowedHosts: options.allowedHosts ?? [],
            localPeerCheck: options.localPeerCheck ?? 'sandboxed-only',
            logger,
          });
  } catch (error) {
    await dialer.close();
    await registry.close();
    throw error;
  }

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await health?.close();
        await dialer.close();
      } finally {
        await registry.close();
        logger.info('exec-server shutdown complete');
        resolveClosed();
      }
    })();
    return closing;
  };
  return {
    url: options.connect,
    healthUrl: health?.url,
    metrics,
    closed,
    close: shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}
