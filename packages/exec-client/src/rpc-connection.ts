import {
  abortedBy,
  type Codec,
  type CodecName,
  createJsonCodec,
  createMsgpackCodec,
  ExecError,
  type Logger,
  MAX_FRAME_BYTES,
  NOOP_LOGGER,
  RpcError,
  type RpcMessage,
  sniffCodec,
  TransportClosedError,
} from '@execd/protocol';
import WebSocket, { type RawData } from 'ws';
import { UpgradeRefusedError } from './errors.ts';
import { InboundRequests, type NetworkPolicyRequestHandler } from './inbound-requests.ts';
import { CLOSE_HANDSHAKE_TIMEOUT_MS, MAX_IN_FLIGHT_CALLS, RESERVED_CLEANUP_CALLS } from './limits.ts';

/** Options of {@link RpcConnection.open}. */
export interface RpcConnectionOptions {
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>` on the upgrade. */
  readonly token?: string | undefined;
  /** Codec of outbound frames; inbound frames are sniffed (text = JSON, binary = msgpack or JSON). */
  readonly codec: CodecName;
  readonly connectTimeoutMs: number;
  /** Ping every this long; drop the socket when nothing arrived for two intervals. 0 = off. */
  readonly keepaliveIntervalMs: number;
  readonly maxFrameBytes?: number | undefined;
  readonly logger?: Logger | undefined;
  /** Abandons opening (rejects with an `aborted` ExecError). */
  readonly cancelSignal?: AbortSignal | undefined;
  /** Every notification, in arrival order (params not yet validated). */
  readonly onNotification: (method: string, params: unknown) => void;
  /** Answers the server's `network/policyRequest`s; absent: they get -32601 (see InboundRequests). */
  readonly onNetworkPolicyRequest?: NetworkPolicyRequestHandler | undefined;
  /** Called once when the socket is gone, before pending calls are rejected. */
  readonly onClose: (reason: string) => void;
}

/** Options of one request. */
export interface RequestOptions {
  /** Reject with an `aborted` ExecError after this long (default: no deadline, as the original). */
  readonly timeoutMs?: number | undefined;
  /** A cleanup call (`process/terminate`) may use the reserved slot. */
  readonly cleanup?: boolean | undefined;
  /** Abandons the call: rejects with an `aborted` ExecError; a late answer is ignored. */
  readonly cancelSignal?: AbortSignal | undefined;
}

interface Pending {
  readonly method: string;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout | undefined;
  readonly cleanupAbort: (() => void) | undefined;
}

/**
 * One WebSocket carrying the exec-server JSON-RPC dialect: integer request ids from 1, responses
 * matched by id (in any order), a bounded pending table, notifications handed to the owner, and
 * the server's requests answered (`network/policyRequest` by the owner's handler, anything else
 * -32601). It never reconnects: the client builds a new one.
 */
export class RpcConnection {
  readonly #socket: WebSocket;
  readonly #codec: Codec;
  readonly #decoders: Readonly<Record<CodecName, Codec>>;
  readonly #options: RpcConnectionOptions;
  readonly #logger: Logger;
  readonly #pending = new Map<number, Pending>();
  readonly #inbound: InboundRequests;
  readonly #closedPromise: Promise<void>;
  #resolveClosed!: () => void;
  #nextId = 1;
  #closeReason: string | undefined;
  #errorText: string | undefined;
  #lastActivityMs = performance.now();
  #keepalive: NodeJS.Timeout | undefined;

  private constructor(socket: WebSocket, options: RpcConnectionOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#logger = options.logger ?? NOOP_LOGGER;
    const limits = { maxFrameBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES };
    this.#decoders = { json: createJsonCodec(limits), msgpack: createMsgpackCodec(limits) };
    this.#codec = this.#decoders[options.codec];
    this.#inbound = new InboundRequests({
      send: (message) => this.#send(message),
      onNetworkPolicyRequest: options.onNetworkPolicyRequest,
      logger: this.#logger,
    });
    this.#closedPromise = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    socket.on('message', (data, isBinary) => this.#onFrame(data, isBinary));
    socket.on('ping', () => this.#touch());
    socket.on('pong', () => this.#touch());
    socket.on('error', (error) => {
      this.#errorText ??= error.message;
    });
    socket.on('close', (code, reason) => {
      const text = reason.toString();
      this.#onClosed(code, this.#errorText ?? `websocket closed (${code}${text ? ` ${text}` : ''})`);
    });
    if (options.keepaliveIntervalMs > 0) {
      this.#keepalive = setInterval(() => this.#checkAlive(), options.keepaliveIntervalMs);
      this.#keepalive.unref();
    }
  }

  /** Opens the WebSocket; rejects with `connectTimeout` or `transportClosed` (refused, HTTP error). */
  static open(options: RpcConnectionOptions): Promise<RpcConnection> {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(options.url, {
        headers,
        perMessageDeflate: false,
        maxPayload: options.maxFrameBytes ?? MAX_FRAME_BYTES,
      });
      const onAbort = (): void =>
        fail(new ExecError('aborted', `connecting to exec-server at ${options.url} was cancelled`));
      const fail = (error: ExecError): void => {
        clearTimeout(timer);
        options.cancelSignal?.removeEventListener('abort', onAbort);
        socket.removeAllListeners();
        socket.on('error', () => {});
        socket.terminate();
        reject(error);
      };
      const timer = setTimeout(
        () =>
          fail(
            new ExecError(
              'connectTimeout',
              `timed out connecting to exec-server at ${options.url} after ${options.connectTimeoutMs} ms`,
            ),
          ),
        options.connectTimeoutMs,
      );
      if (options.cancelSignal?.aborted) {
        onAbort();
        return;
      }
      options.cancelSignal?.addEventListener('abort', onAbort, { once: true });
      socket.once('open', () => {
        clearTimeout(timer);
        options.cancelSignal?.removeEventListener('abort', onAbort);
        socket.removeAllListeners();
        resolve(new RpcConnection(socket, options));
      });
      socket.once('unexpected-response', (_request, response) => {
        response.resume();
        fail(new UpgradeRefusedError(options.url, response.statusCode ?? 0));
      });
      socket.once('error', (error) =>
        fail(
          new TransportClosedError(
            undefined,
            `failed to connect to exec-server at ${options.url}: ${error.message}`,
            { cause: error },
          ),
        ),
      );
    });
  }

  /** True until the socket closed (or began closing). */
  get isOpen(): boolean {
    return this.#closeReason === undefined && this.#socket.readyState === WebSocket.OPEN;
  }

  /** Why the socket closed, once it has. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** Settles once the socket is closed and every pending call was rejected. */
  get closed(): Promise<void> {
    return this.#closedPromise;
  }

  /** Requests in flight. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /**
   * Sends a request and resolves with its raw result. Rejects with an RpcError for an error reply,
   * a TransportClosedError when the socket goes away first, or an `aborted` ExecError on timeout.
   */
  request(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    if (this.#closeReason !== undefined) return Promise.reject(this.#transportError());
    const limit = MAX_IN_FLIGHT_CALLS + (options.cleanup ? RESERVED_CLEANUP_CALLS : 0);
    if (this.#pending.size >= limit) {
      return Promise.reject(
        new RpcError('internal', `exec-server client has ${this.#pending.size} requests in flight`),
      );
    }
    const cancelSignal = options.cancelSignal;
    if (cancelSignal?.aborted) return Promise.reject(abortedBy(cancelSignal, method));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const abandon = (error: ExecError): void => {
        const pending = this.#pending.get(id);
        if (pending === undefined) return;
        this.#pending.delete(id);
        clearTimeout(pending.timer);
        pending.cleanupAbort?.();
        reject(error);
      };
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(
              () => abandon(new ExecError('aborted', `${method} timed out after ${options.timeoutMs} ms`)),
              options.timeoutMs,
            );
      let cleanupAbort: (() => void) | undefined;
      if (cancelSignal !== undefined) {
        const onAbort = (): void => abandon(abortedBy(cancelSignal, method));
        cancelSignal.addEventListener('abort', onAbort, { once: true });
        cleanupAbort = () => cancelSignal.removeEventListener('abort', onAbort);
      }
      this.#pending.set(id, { method, resolve, reject, timer, cleanupAbort });
      this.#logger.trace('rpc out', { id, method });
      this.#send({ kind: 'request', id, method, params });
    });
  }

  /** Sends a notification (`initialized`). */
  notify(method: string, params: unknown): void {
    if (this.#closeReason !== undefined) return;
    this.#send({ kind: 'notification', method, params });
  }

  /** Closes with a close handshake (bounded), then destroys the socket. Idempotent. */
  async close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.close(1000, 'client closed');
    const timer = setTimeout(() => this.#socket.terminate(), CLOSE_HANDSHAKE_TIMEOUT_MS);
    await this.#closedPromise;
    clearTimeout(timer);
  }

  /** Destroys the socket at once (no close frame); `reason` becomes the close reason. */
  terminate(reason: string): void {
    this.#errorText ??= reason;
    this.#socket.terminate();
  }

  #send(message: RpcMessage): void {
    try {
      const frame = this.#codec.binary ? this.#codec.encode(message) : this.#codec.encodeText(message);
      this.#socket.send(frame, { binary: this.#codec.binary });
    } catch (error) {
      this.#logger.warn('failed to send a frame', { error });
      this.terminate(`failed to send a frame: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  #touch(): void {
    this.#lastActivityMs = performance.now();
  }

  #checkAlive(): void {
    const silentMs = performance.now() - this.#lastActivityMs;
    if (silentMs > 2 * this.#options.keepaliveIntervalMs) {
      this.#logger.debug('exec-server connection silent; dropping it', { silentMs });
      this.terminate(`no traffic from the exec-server for ${Math.round(silentMs)} ms`);
      return;
    }
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.ping();
  }

  #onFrame(data: RawData, isBinary: boolean): void {
    this.#touch();
    // ws hands out Buffers (binaryType "nodebuffer"); never copy a large frame needlessly.
    const frame = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data as ArrayBuffer);
    let message: RpcMessage;
    try {
      message = this.#decoders[sniffCodec(frame, isBinary)].decode(frame);
    } catch (error) {
      this.#logger.warn('unreadable frame from the exec-server', { error });
      this.terminate(`unreadable frame from the exec-server: ${(error as Error).message}`);
      return;
    }
    switch (message.kind) {
      case 'notification':
        this.#options.onNotification(message.method, message.params);
        return;
      case 'request':
        this.#logger.trace('server request in', { id: message.id, method: message.method });
        this.#inbound.handle(message.id, message.method, message.params);
        return;
      case 'response':
      case 'error':
        this.#settle(message);
    }
  }

  #settle(message: Extract<RpcMessage, { kind: 'response' | 'error' }>): void {
    const id = message.id;
    const pending = typeof id === 'number' ? this.#pending.get(id) : undefined;
    if (pending === undefined) {
      if (message.kind === 'error')
        this.#logger.warn('exec-server reported an error', { error: message.error });
      else this.#logger.debug('response to an unknown request id', { id });
      return;
    }
    this.#pending.delete(id as number);
    clearTimeout(pending.timer);
    pending.cleanupAbort?.();
    this.#logger.trace('rpc in', { id, method: pending.method, ok: message.kind === 'response' });
    if (message.kind === 'response') pending.resolve(message.result);
    else pending.reject(RpcError.fromWire(message.error));
  }

  #transportError(): TransportClosedError {
    return new TransportClosedError(undefined, `exec-server transport disconnected: ${this.#closeReason}`);
  }

  #onClosed(code: number, reason: string): void {
    if (this.#closeReason !== undefined) return;
    this.#closeReason = reason;
    clearInterval(this.#keepalive);
    this.#inbound.close(`exec-server transport disconnected: ${reason}`);
    this.#logger.debug('exec-server connection closed', { code, reason });
    try {
      this.#options.onClose(reason);
    } finally {
      const error = this.#transportError();
      const pending = [...this.#pending.values()];
      this.#pending.clear();
      for (const call of pending) {
        clearTimeout(call.timer);
        call.cleanupAbort?.();
        call.reject(error);
      }
      this.#resolveClosed();
    }
  }
}
