import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type Codec,
  type CodecName,
  createJsonCodec,
  createMsgpackCodec,
  type Logger,
  NOOP_LOGGER,
} from '@execd/protocol';
import { type WebSocket, WebSocketServer } from 'ws';
import { type BearerTokenVerifier, bearerChallenge, tokenRefusalHint } from './auth.ts';
import type { ConnectionProcessor } from './connection-processor.ts';
import { heapCollectionDue, onHeapReclaimed } from './heap-policy.ts';
import { answerPlainHttp, pathOf, type Readiness } from './http-endpoints.ts';
import { formatWebSocketUrl } from './listen-url.ts';
import type { LocalPeerCheck } from './local-peer.ts';
import type { ExecServerMetrics } from './metrics.ts';
import { PartialFrameBudget } from './partial-frame-budget.ts';
import { RequestGuard } from './request-guard.ts';
import { WebSocketTransport } from './websocket-transport.ts';

/**
 * Extra bytes `ws` accepts above `maxFrameBytes`. A frame slightly over the limit is still read
 * and answered -32600 by the codec (the connection stays open); one beyond this margin is
 * refused by `ws` itself, which closes the connection with 1009 without buffering it.
 */
export const OVERSIZE_FRAME_MARGIN_BYTES: number = 1024 * 1024;

/** How long shutdown waits for clients to answer the close frame before destroying sockets. */
const CLOSE_HANDSHAKE_GRACE_MS = 1_000;

/** WebSocket close code sent to every client when the server shuts down. */
const CLOSE_GOING_AWAY = 1001;

/** Options of {@link listenWebSocket}. */
export interface WebSocketListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly verifier: BearerTokenVerifier | undefined;
  readonly maxFrameBytes: number;
  readonly keepaliveIntervalMs: number;
  readonly maxQueuedNotificationBytes: number;
  readonly logger?: Logger;
  /** Served as `GET /metrics` (Prometheus text format) when given. */
  readonly metrics?: ExecServerMetrics | undefined;
  /** Host names served besides IP literals and `localhost` (DNS-rebinding protection). */
  readonly allowedHosts: readonly string[];
  /** What to do with connections from this machine (see `LocalPeerCheck`). */
  readonly localPeerCheck: LocalPeerCheck;
  /** Deadline of one connection's attribution (default `PEER_ATTRIBUTION_TIMEOUT_MS`). */
  readonly peerAttributionTimeoutMs?: number | undefined;
  /** Starts the processor of a freshly upgraded connection. */
  readonly openConnection: (transport: WebSocketTransport) => ConnectionProcessor;
  /** What `GET /readyz` answers (default: always ready, as the original). */
  readonly readiness?: (() => Readiness) | undefined;
}

/** A listening WebSocket endpoint. */
export interface WebSocketListener {
  /** `ws://IP:PORT` with the bound port. */
  readonly url: string;
  /** Stops accepting, closes every connection (1001) and the HTTP server. Idempotent. */
  close(): Promise<void>;
}

/** A refused upgrade: status, reason phrase, extra header lines and an optional one-line body. */
type UpgradeRefusal = [status: number, reason: string, extraHeaders?: string, body?: string];

function reject(socket: Duplex, ...[status, text, extraHeaders = '', body = '']: UpgradeRefusal): void {
  const length = Buffer.byteLength(body);
  const type = body === '' ? '' : 'Content-Type: text/plain; charset=utf-8\r\n';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n${type}Content-Length: ${length}\r\n${extraHeaders}\r\n${body}`,
  );
  socket.destroy();
}

function peerLabel(request: IncomingMessage): string {
  const address = request.socket.remoteAddress ?? 'unknown';
  const port = request.socket.remotePort ?? 0;
  return `exec-server websocket ${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * Serves `GET /` (WebSocket upgrade), `GET /readyz` (200) and `GET /metrics` on a Node HTTP
 * server, as the original (plus metrics). Every request first passes the {@link RequestGuard}
 * (`Origin` 403, `Host` 421, sandboxed local peer 403); then, with an auth token, the upgrade
 * (and `/metrics`) require `Authorization: Bearer <token>` (401 otherwise).
 */
export async function listenWebSocket(options: WebSocketListenerOptions): Promise<WebSocketListener> {
  const logger = options.logger ?? NOOP_LOGGER;
  const limits = { maxFrameBytes: options.maxFrameBytes };
  const codecs: Readonly<Record<CodecName, Codec>> = {
    json: createJsonCodec(limits),
    msgpack: createMsgpackCodec(limits),
  };
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes + OVERSIZE_FRAME_MARGIN_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const live = new Map<WebSocketTransport, ConnectionProcessor>();
  const partialFrames = new PartialFrameBudget({
    hold: { held: heapCollectionDue, subscribe: onHeapReclaimed },
  });
  options.metrics?.bindPartialFrames(() => partialFrames.stats());
  let closing = false;

  const guard = new RequestGuard({
    allowedHosts: options.allowedHosts,
    localPeerCheck: options.localPeerCheck,
    peerAttributionTimeoutMs: options.peerAttributionTimeoutMs,
    logger,
  });

  const onRequest = (request: IncomingMessage, response: ServerResponse): void =>
    answerPlainHttp(request, response, {
      guard,
      metrics: options.metrics,
      verifier: options.verifier,
      readiness: options.readiness,
      upgradeAtRoot: true,
    });

  /** Why an upgrade that passed the guard is refused (status, reason phrase, extra headers). */
  const refusal = (request: IncomingMessage): UpgradeRefusal | undefined => {
    if (pathOf(request) !== '/') return [404, 'Not Found'];
    if (closing) return [503, 'Service Unavailable'];
    if (options.verifier && !options.verifier.verify(request.headers.authorization)) {
      const sent = request.headers.authorization !== undefined;
      logger.warn('refused websocket upgrade without a valid bearer token', {
        peer: request.socket.remoteAddress,
        // Whether a token came at all tells "client sends none" (Codex) from "wrong token".
        authorization: sent ? 'invalid' : 'missing',
      });
      const challenge = `WWW-Authenticate: ${bearerChallenge(request.headers.authorization)}\r\n`;
      return [401, 'Unauthorized', challenge, tokenRefusalHint(request.headers.authorization)];
    }
    return undefined;
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    void guard.screen(request).then((screened) => {
      if (socket.destroyed) return;
      const refused: UpgradeRefusal | undefined = screened
        ? [screened.status, screened.reason]
        : refusal(request);
      if (refused) {
        reject(socket, ...refused);
        return;
      }
      upgrade(request, socket, head);
    });
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const transport = new WebSocketTransport({
        socket: ws,
        rawSocket: socket,
        partialFrames,
        label: peerLabel(request),
        codecs,
        keepaliveIntervalMs: options.keepaliveIntervalMs,
        maxQueuedNotificationBytes: options.maxQueuedNotificationBytes,
        logger,
      });
      if (closing) {
        transport.shutdown(CLOSE_GOING_AWAY, 'server shutting down');
        return;
      }
      logger.info('websocket client connected', { connection: transport.label });
      const processor = options.openConnection(transport);
      live.set(transport, processor);
      void processor.done.finally(() => live.delete(transport));
    });
  };

  const server = createServer(onRequest);
  // Attribution starts at accept time, while the peer that connected certainly still runs.
  server.on('connection', (socket) => guard.watch(socket));
  server.on('upgrade', onUpgrade);
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, rejectListen) => {
    server.once('error', rejectListen);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', rejectListen);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = formatWebSocketUrl(options.host, port);
  logger.info('exec-server listening', { url });

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      partialFrames.close();
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      const connections = [...live.entries()];
      for (const [transport] of connections) transport.shutdown(CLOSE_GOING_AWAY, 'server shutting down');
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_HANDSHAKE_GRACE_MS);
      });
      await Promise.race([Promise.all(connections.map(([, processor]) => processor.done)), grace]);
      clearTimeout(timer);
      for (const [transport] of live) transport.terminate();
      await Promise.all(connections.map(([, processor]) => processor.done));
      server.closeAllConnections();
      await serverClosed;
      wss.close();
    })();
    return closed;
  };
  return { url, close };
}
