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
  type W3cTraceContext,
} from '@execd/protocol';
import type { FrameChannel } from './frame-channel.ts';
import { InboundRequests, type NetworkPolicyRequestHandler } from './inbound-requests.ts';
import { MAX_IN_FLIGHT_CALLS, RESERVED_CLEANUP_CALLS } from './limits.ts';
import { openStdioChannel, type StdioCommand } from './stdio-channel.ts';
import { openWebSocketChannel } from './websocket-channel.ts';

/** Options of {@link RpcConnection.open}. */
export interface RpcConnectionOptions {
  /** `ws://host:port` of the exec-server; or `command` instead. */
  readonly url?: string | undefined;
  /** Spawn this and speak newline-delimited JSON over its stdin/stdout (JSON codec only). */
  readonly command?: StdioCommand | undefined;
  /**
   * Instead of `url` or `command`: where the channel comes from (an accepted client waits for
   * the executor's next dial). Called with `connectTimeoutMs` and `cancelSignal`.
   */
  readonly openChannel?:
    | ((timeoutMs: number, cancelSignal: AbortSignal | undefined) => Promise<FrameChannel>)
    | undefined;
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
  /** The caller's W3C trace context, sent as the request's `trace` member. */
  readonly trace?: W3cTraceContext | undefined;
}

interface Pending {
  readonly method: string;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout | undefined;
  readonly cleanupAbort: (() => void) | undefined;
}

/**
 * One channel (a WebSocket, or a spawned command's stdio) carrying the exec-server JSON-RPC
 * dialect: integer request ids from 1, responses matched by id (in any order), a bounded pending
 * table, notifications handed to the owner, and the server's requests answered
 * (`network/policyRequest` by the owner's handler, anything else -32601). It never reconnects:
 * the client builds a new one.
 */
export class RpcConnection {
  readonly #channel: FrameChannel;
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

  private constructor(channel: FrameChannel, options: RpcConnectionOptions) {
    this.#channel = channel;
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
    channel.listen({
      onFrame: (frame, isBinary) => this.#onFrame(frame, isBinary),
      onActivity: () => this.#touch(),
      onError: (error) => {
        this.#errorText ??= error.message;
      },
      onClose: (code, reason) => this.#onClosed(code, this.#errorText ?? reason),
    });
    if (options.keepaliveIntervalMs > 0 && channel.pings) {
      this.#keepalive = setInterval(() => this.#checkAlive(), options.keepaliveIntervalMs);
      this.#keepalive.unref();
    }
  }

  /**
   * Opens the WebSocket (`url`) or spawns the command (`command`); rejects with `connectTimeout`
   * or `transportClosed` (refused, HTTP error, command not startable).
   */
  static async open(options: RpcConnectionOptions): Promise<RpcConnection> {
    if (options.openChannel !== undefined) {
      const accepted = await options.openChannel(options.connectTimeoutMs, options.cancelSignal);
      return new RpcConnection(accepted, options);
    }
    const channel =
      options.command !== undefined
        ? await openStdioChannel({
            command: options.command,
            maxFrameBytes: options.maxFrameBytes,
            cancelSignal: options.cancelSignal,
          })
        : await openWebSocketChannel({
            url: options.url ?? '',
            token: options.token,
            connectTimeoutMs: options.connectTimeoutMs,
            maxFrameBytes: options.maxFrameBytes,
            cancelSignal: options.cancelSignal,
          });
    // Only text frames on stdio: JSON whatever the caller asked for.
    const codec = channel.binaryFrames ? options.codec : 'json';
    return new RpcConnection(channel, { ...options, codec });
  }

  /** True until the channel closed (or began closing). */
  get isOpen(): boolean {
    return this.#closeReason === undefined && this.#channel.isOpen;
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
      const trace = options.trace;
      this.#send(
        trace === undefined
          ? { kind: 'request', id, method, params }
          : { kind: 'request', id, method, params, trace },
      );
    });
  }

  /** Sends a notification (`initialized`). */
  notify(method: string, params: unknown): void {
    if (this.#closeReason !== undefined) return;
    this.#send({ kind: 'notification', method, params });
  }

  /** Closes gracefully (bounded: a close handshake, or stdin EOF), then destroys. Idempotent. */
  async close(): Promise<void> {
    this.#channel.close();
    await this.#closedPromise;
  }

  /** Destroys the socket at once (no close frame); `reason` becomes the close reason. */
  terminate(reason: string): void {
    this.#errorText ??= reason;
    this.#channel.terminate();
  }

  #send(message: RpcMessage): void {
    try {
      const frame = this.#codec.binary ? this.#codec.encode(message) : this.#codec.encodeText(message);
      this.#channel.send(frame, this.#codec.binary);
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
    this.#channel.ping();
  }

  #onFrame(frame: Buffer | readonly Buffer[], isBinary: boolean): void {
    this.#touch();
    let message: RpcMessage;
    try {
      message = this.#decode(frame, isBinary);
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

  /**
   * A frame as a message. Fragments that open a msgpack map are read as they are (an execd
   * `process/outputBatch`: its chunks stay views of them); anything else is joined first.
   */
  #decode(frame: Buffer | readonly Buffer[], isBinary: boolean): RpcMessage {
    if (!Array.isArray(frame)) {
      const whole = frame as Buffer;
      return this.#decoders[sniffCodec(whole, isBinary)].decode(whole);
    }
    const fragments = frame as readonly Buffer[];
    if (fragments.length === 1) return this.#decode(fragments[0]!, isBinary);
    const first = fragments.find((fragment) => fragment.byteLength > 0)?.[0];
    if (first !== undefined && isMsgpackMap(first)) return this.#decoders.msgpack.decodeFragments(fragments);
    return this.#decode(Buffer.concat(fragments), isBinary);
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

  #onClosed(code: number | undefined, reason: string): void {
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

/** The first byte of a msgpack map (a message is one), never the start of JSON text. */
function isMsgpackMap(byte: number): boolean {
  return (byte >= 0x80 && byte <= 0x8f) || byte === 0xde || byte === 0xdf;
}
