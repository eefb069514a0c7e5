import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  ENVIRONMENT_ID_HEADER,
  type Logger,
  MAX_FRAME_BYTES,
  NOOP_LOGGER,
  untilAborted,
} from '@execd/protocol';
import { type WebSocket, WebSocketServer } from 'ws';
import { REPLACEMENT_IN_PROGRESS_MESSAGE } from './accepted-channel-source.ts';
import type { ExecServerClientOptions } from './client-options.ts';
import { describeError } from './errors.ts';
import { ExecServerClient } from './exec-server-client.ts';
import { webSocketChannel } from './websocket-channel.ts';

/** The routing header (defined in `@execd/protocol`), re-exported for the acceptor's users. */
export { ENVIRONMENT_ID_HEADER };

/** The environment id of an executor that sent none. */
export const DEFAULT_ENVIRONMENT_ID = 'default';

/** WebSocket close code for a refused replacement: "try again later" (RFC 6455 registry, 1013). */
const CLOSE_TRY_AGAIN_LATER = 1013;

/** Close reasons are limited to 123 bytes; keep inside it. */
const MAX_CLOSE_REASON_CHARS = 100;

/** Options of {@link acceptExecServers}. */
export interface AcceptExecServersOptions {
  /** Serve upgrades of this HTTP server (the caller listens and closes it); else one is started. */
  readonly server?: Server | undefined;
  /** Where to listen when no `server` is given (default `127.0.0.1`, port 0). */
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  /** Upgrades of this path only (default `/`); others are left to other listeners (404 if ours). */
  readonly path?: string | undefined;
  /** Require `Authorization: Bearer <token>` on the upgrade (else 401). */
  readonly token?: string | undefined;
  /** Decides whether an upgrade is let in (after `token`); false answers 403. */
  readonly authenticate?: ((request: IncomingMessage) => boolean | Promise<boolean>) | undefined;
  /** Options of each environment's client (no `url`/`command`; `resumeSessionId` is refused). */
  readonly client?: Omit<ExecServerClientOptions, 'url' | 'command'> | undefined;
  readonly maxFrameBytes?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** One executor that dialled in, with the client that drives it. */
export interface AcceptedEnvironment {
  readonly environmentId: string;
  readonly client: ExecServerClient;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/**
 * The host side of reverse connections: executors behind NAT dial in (`execd-server --connect`)
 * and the host drives each as an {@link ExecServerClient} (the original's accepted-websocket
 * mode). The first socket of an environment creates its client; a later one replaces the
 * client's connection and resumes its session (one replacement at a time; see
 * `ExecServerClient.replaceChannel`). A client whose session could not be resumed (`failed`) is
 * replaced by a new client at the executor's next dial.
 */
export class ExecServerAcceptor implements AsyncDisposable {
  readonly #options: AcceptExecServersOptions;
  readonly #logger: Logger;
  readonly #server: Server;
  readonly #ownsServer: boolean;
  readonly #path: string;
  readonly #wss: WebSocketServer;
  readonly #clients = new Map<string, ExecServerClient>();
  readonly #initializing = new Set<string>();
  readonly #sockets = new Set<WebSocket>();
  readonly #ready: AcceptedEnvironment[] = [];
  readonly #waiters: ((environment: AcceptedEnvironment) => void)[] = [];
  #url = '';
  #closing: Promise<void> | undefined;

  private constructor(options: AcceptExecServersOptions) {
    this.#options = options;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#path = options.path ?? '/';
    this.#ownsServer = options.server === undefined;
    this.#server = options.server ?? createServer((_request, response) => response.writeHead(426).end());
    this.#wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      clientTracking: false,
      maxPayload: options.maxFrameBytes ?? MAX_FRAME_BYTES,
    });
    this.#server.on('upgrade', this.#onUpgrade);
  }

  /** Starts accepting (listening first when no `server` was given). */
  static async start(options: AcceptExecServersOptions = {}): Promise<ExecServerAcceptor> {
    const acceptor = new ExecServerAcceptor(options);
    if (acceptor.#ownsServer) {
      const host = options.host ?? '127.0.0.1';
      await new Promise<void>((resolve, reject) => {
        acceptor.#server.once('error', reject);
        acceptor.#server.listen({ host, port: options.port ?? 0 }, () => {
          acceptor.#server.off('error', reject);
          resolve();
        });
      });
      const address = acceptor.#server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      acceptor.#url = `ws://${host.includes(':') ? `[${host}]` : host}:${port}${acceptor.#path}`;
    }
    return acceptor;
  }

  /** `ws://HOST:PORT/PATH` executors dial, when the acceptor listens itself (else empty). */
  get url(): string {
    return this.#url;
  }

  /** The current client of `environmentId`, if it ever dialled in. */
  client(environmentId: string): ExecServerClient | undefined {
    return this.#clients.get(environmentId);
  }

  /** The next environment whose client is ready (a first dial, or a new session after a failed one). */
  next(options: { readonly cancelSignal?: AbortSignal | undefined } = {}): Promise<AcceptedEnvironment> {
    const ready = this.#ready.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    let waiter!: (environment: AcceptedEnvironment) => void;
    const waiting = new Promise<AcceptedEnvironment>((resolve) => {
      waiter = resolve;
      this.#waiters.push(resolve);
    });
    const signal = options.cancelSignal;
    if (signal === undefined) return waiting;
    // A cancelled wait gives up its place: the next environment goes to another caller.
    const forget = (): void => {
      const at = this.#waiters.indexOf(waiter);
      if (at >= 0) this.#waiters.splice(at, 1);
    };
    signal.addEventListener('abort', forget, { once: true });
    return untilAborted(waiting, signal).finally(() => signal.removeEventListener('abort', forget));
  }

  /** Stops accepting and closes every client and socket (and the server, if it started one). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#server.off('upgrade', this.#onUpgrade);
      await Promise.all([...this.#clients.values()].map((client) => client.close()));
      for (const socket of this.#sockets) socket.terminate();
      this.#wss.close();
      if (this.#ownsServer) {
        this.#server.closeAllConnections();
        await new Promise<void>((resolve) => this.#server.close(() => resolve()));
      }
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  readonly #onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== this.#path) {
      if (this.#ownsServer) refuse(socket, 404, 'Not Found');
      return;
    }
    socket.on('error', () => socket.destroy());
    void this.#admit(request).then((refusal) => {
      if (socket.destroyed) return;
      const refused: [number, string] | undefined =
        this.#closing !== undefined ? [503, 'Service Unavailable'] : refusal;
      if (refused !== undefined) refuse(socket, ...refused);
      else this.#wss.handleUpgrade(request, socket, head, (ws) => this.#onSocket(request, ws));
    });
  };

  async #admit(request: IncomingMessage): Promise<[number, string] | undefined> {
    const { token, authenticate } = this.#options;
    if (token !== undefined && !tokenMatches(request.headers.authorization, token)) {
      return [401, 'Unauthorized'];
    }
    try {
      if (authenticate !== undefined && !(await authenticate(request))) return [403, 'Forbidden'];
    } catch (error) {
      this.#logger.warn('authenticate threw; refusing the executor', { error: describeError(error) });
      return [403, 'Forbidden'];
    }
    return undefined;
  }

  #onSocket(request: IncomingMessage, ws: WebSocket): void {
    this.#sockets.add(ws);
    ws.once('close', () => this.#sockets.delete(ws));
    const header = request.headers[ENVIRONMENT_ID_HEADER];
    const environmentId = (Array.isArray(header) ? header[0] : header)?.trim() || DEFAULT_ENVIRONMENT_ID;
    const refuseSocket = (message: string): void => {
      this.#logger.info('refused an executor connection', { environmentId, reason: message });
      if (ws.isPaused) ws.resume(); // `webSocketChannel` paused it; the close handshake must be read
      ws.close(CLOSE_TRY_AGAIN_LATER, message.slice(0, MAX_CLOSE_REASON_CHARS));
    };
    const current = this.#clients.get(environmentId);
    if (current !== undefined && (current.state === 'ready' || current.state === 'recovering')) {
      try {
        current.replaceChannel(webSocketChannel(ws));
        this.#logger.debug('executor reconnected; resuming its session', { environmentId });
      } catch (error) {
        refuseSocket(describeError(error));
      }
      return;
    }
    if (this.#initializing.has(environmentId)) {
      refuseSocket(REPLACEMENT_IN_PROGRESS_MESSAGE);
      return;
    }
    this.#initializing.add(environmentId);
    void ExecServerClient.accept(webSocketChannel(ws), this.#options.client)
      .then(
        (client) => {
          if (this.#closing !== undefined) return client.close();
          void current?.close();
          this.#clients.set(environmentId, client);
          this.#logger.info('executor connected', { environmentId, sessionId: client.sessionId });
          const environment = { environmentId, client };
          const waiter = this.#waiters.shift();
          if (waiter) waiter(environment);
          else this.#ready.push(environment);
        },
        (error: unknown) =>
          this.#logger.warn('initializing an accepted executor failed', {
            environmentId,
            error: describeError(error),
          }),
      )
      .finally(() => this.#initializing.delete(environmentId));
  }
}

/** Starts an {@link ExecServerAcceptor}: see there. */
export function acceptExecServers(options: AcceptExecServersOptions = {}): Promise<ExecServerAcceptor> {
  return ExecServerAcceptor.start(options);
}
