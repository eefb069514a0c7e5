import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Codec,
  type CodecName,
  createJsonCodec,
  createMsgpackCodec,
  ENVIRONMENT_ID_HEADER,
  type Logger,
  NOOP_LOGGER,
} from '@execd/protocol';
import WebSocket from 'ws';
import type { ConnectionProcessor } from './connection-processor.ts';
import { OVERSIZE_FRAME_MARGIN_BYTES } from './websocket-listener.ts';
import { WebSocketTransport } from './websocket-transport.ts';

/** First pause before redialling the host after a failed dial or a dropped socket. */
export const REDIAL_INITIAL_DELAY_MS = 100;

/**
 * Longest pause between dials. The host resumes a dropped session only within the server's 30 s
 * detached TTL (and its own 25 s recovery window), so a retry every 5 s at worst leaves several
 * chances inside it.
 */
export const REDIAL_MAX_DELAY_MS = 5_000;

/** Each pause varies by up to this fraction either way, so many executors do not redial in step. */
const REDIAL_JITTER = 0.2;

/** How long one dial may take (TCP, TLS and the upgrade) before it counts as failed. */
const DIAL_TIMEOUT_MS = 10_000;

/** How long shutdown waits for the host to answer the close frame before destroying the socket. */
const CLOSE_HANDSHAKE_GRACE_MS = 1_000;

/** WebSocket close code sent to the host when the executor shuts down. */
const CLOSE_GOING_AWAY = 1001;

/** The routing header (defined in `@execd/protocol`), re-exported for the dialer's users. */
export { ENVIRONMENT_ID_HEADER };

/** Options of {@link dialExecHost}. */
export interface ReverseDialerOptions {
  /** `ws://` or `wss://` URL of the host's acceptor. */
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>` on every dial. */
  readonly token?: string | undefined;
  /** Sent as the `X-Execd-Environment-Id` header on every dial. */
  readonly environmentId?: string | undefined;
  readonly maxFrameBytes: number;
  readonly keepaliveIntervalMs: number;
  readonly maxQueuedNotificationBytes: number;
  readonly logger?: Logger | undefined;
  /** Starts the processor of a freshly dialled connection (the listener's `openConnection`). */
  readonly openConnection: (transport: WebSocketTransport) => ConnectionProcessor;
  /** First pause between dials (default 100 ms), doubling up to `redialMaxDelayMs` (default 5 s). */
  readonly redialInitialDelayMs?: number | undefined;
  readonly redialMaxDelayMs?: number | undefined;
}

/** One dialled socket and the processor serving it. */
interface Served {
  readonly transport: WebSocketTransport;
  readonly processor: ConnectionProcessor;
}

/** A running reverse connection: dials the host, serves the protocol, redials when it drops. */
export interface ReverseDialer {
  /** Whether a connection to the host is open now, and why the last dial failed (if one did). */
  state(): { readonly connected: boolean; readonly lastError: string | undefined };
  /** Stops redialling, closes the current connection (1001). Idempotent. */
  close(): Promise<void>;
}

/** The pause before dial number `attempt` (0-based, counted since the last successful dial). */
export function redialDelayMs(attempt: number, initialMs: number, maxMs: number): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  const jitter = 1 + (Math.random() * 2 - 1) * REDIAL_JITTER;
  return Math.round(base * jitter);
}

/**
 * Dials `url` and serves the exec-server protocol on the socket, as if the host had connected to
 * a listener: each dialled socket is one connection (a `WebSocketTransport` under a
 * `ConnectionProcessor`) of the same session registry. When it drops, its session detaches (and
 * waits the detached TTL) and the dialer dials again with backoff; the host resumes the session
 * on the new socket.
 */
export function dialExecHost(options: ReverseDialerOptions): ReverseDialer {
  const logger = options.logger ?? NOOP_LOGGER;
  const initialMs = options.redialInitialDelayMs ?? REDIAL_INITIAL_DELAY_MS;
  const maxMs = options.redialMaxDelayMs ?? REDIAL_MAX_DELAY_MS;
  const limits = { maxFrameBytes: options.maxFrameBytes };
  const codecs: Readonly<Record<CodecName, Codec>> = {
    json: createJsonCodec(limits),
    msgpack: createMsgpackCodec(limits),
  };
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.environmentId !== undefined) headers[ENVIRONMENT_ID_HEADER] = options.environmentId;
  const stop = new AbortController();
  let dialling: WebSocket | undefined;
  let current: Served | undefined;
  let lastError: string | undefined;

  /**
   * Resolves with the served connection, or undefined (after logging why) when the dial failed.
   * The processor is attached in the `open` event itself: a frame the host sends right after the
   * upgrade may be delivered before any later callback runs.
   */
  const dialOnce = (): Promise<Served | undefined> =>
    new Promise((resolve) => {
      const socket = new WebSocket(options.url, {
        headers,
        perMessageDeflate: false,
        maxPayload: options.maxFrameBytes + OVERSIZE_FRAME_MARGIN_BYTES,
        handshakeTimeout: DIAL_TIMEOUT_MS,
      });
      dialling = socket;
      const onOpen = (): void => {
        settle();
        lastError = undefined;
        resolve(serve(socket));
      };
      const onRefused = (_request: unknown, response: IncomingMessage): void => {
        response.resume();
        fail(`HTTP ${response.statusCode ?? 0}`);
      };
      const onError = (error: Error): void => fail(error.message);
      const settle = (): void => {
        dialling = undefined;
        socket.off('open', onOpen);
        socket.off('unexpected-response', onRefused);
        socket.off('error', onError);
      };
      const fail = (why: string): void => {
        settle();
        lastError = why;
        socket.on('error', () => {});
        socket.terminate();
        if (!stop.signal.aborted) logger.warn('dialling the host failed', { url: options.url, error: why });
        resolve(undefined);
      };
      socket.once('open', onOpen);
      socket.once('unexpected-response', onRefused);
      socket.once('error', onError);
    });

  const serve = (socket: WebSocket): Served => {
    const transport = new WebSocketTransport({
      socket,
      label: `exec-server reverse connection to ${options.url}`,
      codecs,
      keepaliveIntervalMs: options.keepaliveIntervalMs,
      maxQueuedNotificationBytes: options.maxQueuedNotificationBytes,
      logger,
    });
    logger.info('connected to the host', { url: options.url });
    return { transport, processor: options.openConnection(transport) };
  };

  const run = async (): Promise<void> => {
    let attempt = 0;
    for (;;) {
      if (stop.signal.aborted) return;
      const served = await dialOnce();
      if (served !== undefined) {
        const openedMs = performance.now();
        current = served;
        if (stop.signal.aborted) served.transport.terminate();
        await served.processor.done;
        current = undefined;
        if (stop.signal.aborted) return;
        // A connection that lasted is a success: the next dial starts over at the shortest pause.
        // One closed at once (the host refused it, e.g. a replacement already in progress) is not.
        if (performance.now() - openedMs >= maxMs) attempt = 0;
        logger.info('connection to the host lost; redialling', { url: options.url });
      }
      const delay = redialDelayMs(attempt++, initialMs, maxMs);
      try {
        await sleep(delay, undefined, { signal: stop.signal });
      } catch {
        return; // stopped
      }
    }
  };

  const running = run().catch((error: unknown) => logger.error('reverse connection failed', { error }));
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      stop.abort();
      dialling?.terminate();
      const live = current;
      if (live !== undefined) {
        live.transport.shutdown(CLOSE_GOING_AWAY, 'server shutting down');
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_HANDSHAKE_GRACE_MS);
        });
        await Promise.race([live.processor.done, grace]);
        clearTimeout(timer);
        live.transport.terminate();
        await live.processor.done;
      }
      await running;
    })();
    return closed;
  };
  return { state: () => ({ connected: current !== undefined, lastError }), close };
}
