import {
  type CodecName,
  decodeResult,
  type EnvironmentInfo,
  errorMessage,
  type Logger,
  METHODS,
  type NetworkPolicyRequestParams,
  type NetworkPolicyResponse,
  NOOP_LOGGER,
  notificationMessage,
  type RequestId,
  RPC_ERROR_NUMBERS,
  RpcError,
  type RpcMessage,
  readTraceContext,
  responseMessage,
  TransportClosedError,
} from '@execd/protocol';
import { ConnectionHandler } from './connection-handler.ts';
import { InboundQueue } from './inbound-queue.ts';
import type { ExecServerMetrics } from './metrics.ts';
import { type DispatchMode, RequestLane } from './request-lanes.ts';
import { ServerRequests } from './server-requests.ts';
import type { SessionRegistry } from './session-registry.ts';

/** Ids of the requests the server sends (`np-1`, ...): strings, never mistaken for a client's integers. */
export const SERVER_REQUEST_ID_PREFIX = 'np-';

/** What a transport (WebSocket, stdio) offers the processor of one connection. */
export interface ConnectionTransport {
  /** Human-readable peer name used in logs and error texts, e.g. `exec-server websocket 127.0.0.1:5000`. */
  readonly label: string;
  /** Sends a response or error in `codec`; never dropped while the connection is open. */
  sendResponse(message: RpcMessage, codec: CodecName): void;
  /**
   * Sends a notification in the connection's codec. A transport with a bounded backlog reports
   * crossing its watermarks to {@link ConnectionProcessor.outboundPressure}, and drops a
   * notification only past its hard cap.
   */
  sendNotification(message: RpcMessage): void;
  /** Ends the connection (the transport then calls `disconnected`). */
  close(reason: string): void;
  /** Stops/restarts reading inbound frames (backpressure). */
  pauseReading(): void;
  resumeReading(): void;
  /**
   * Checks that the peer is still there and ends the connection unless it answers within
   * `timeoutMs` (another connection wants its session). Absent: the transport cannot tell.
   */
  probeLiveness?(timeoutMs: number): void;
  /**
   * The client asked for the execd `process/outputBatch` extension in `initialize`; a transport
   * that can batch output (a msgpack WebSocket) does so from now on. Absent: never batches.
   */
  enableOutputBatches?(): void;
}

/** Options of {@link ConnectionProcessor}. */
export interface ConnectionProcessorOptions {
  readonly transport: ConnectionTransport;
  readonly registry: SessionRegistry;
  readonly dispatchMode: DispatchMode;
  readonly environmentInfo: () => EnvironmentInfo;
  readonly logger?: Logger;
  /** Counts requests, their latency and the output pushed (default: not counted). */
  readonly metrics?: ExecServerMetrics | undefined;
  /** The executor's own environment (`http/request`, `environmentConfig/read`); default `process.env`. */
  readonly executorEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /** Folder of the system config layers (default `/etc/codex`). */
  readonly systemConfigDir?: string | undefined;
}

/**
 * Runs one connection (spec §2.5, §2.6): reads classified frames in arrival order, answers
 * malformed frames with id -1, closes on protocol violations, and runs requests inline or on the
 * control/ordinary lanes. On disconnect, in-flight requests are abandoned and the session detached.
 */
export class ConnectionProcessor {
  readonly #transport: ConnectionTransport;
  readonly #handler: ConnectionHandler;
  readonly #logger: Logger;
  readonly #mode: DispatchMode;
  readonly #lanes: { readonly control: RequestLane; readonly ordinary: RequestLane } | undefined;
  readonly #inbox: InboundQueue;
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;
  readonly #abortedPromise: Promise<void>;
  readonly #metrics: ExecServerMetrics | undefined;
  readonly #serverRequests: ServerRequests;
  /** The codec of the connection's first frame: requests the server starts go out in it. */
  #codec: CodecName | undefined;

  constructor(options: ConnectionProcessorOptions) {
    this.#transport = options.transport;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#mode = options.dispatchMode;
    this.#metrics = options.metrics;
    this.#metrics?.observeConnection('open');
    this.#lanes =
      this.#mode.kind === 'concurrent'
        ? { control: new RequestLane(this.#mode.limit), ordinary: new RequestLane(this.#mode.limit) }
        : undefined;
    const signal = this.#abort.signal;
    this.#inbox = new InboundQueue({
      signal,
      pauseReading: () => this.#transport.pauseReading(),
      resumeReading: () => this.#transport.resumeReading(),
      waitingElsewhere: () => (this.#lanes ? this.#lanes.control.waiting + this.#lanes.ordinary.waiting : 0),
    });
    this.#abortedPromise = new Promise((resolve) =>
      signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    this.#serverRequests = new ServerRequests({
      idPrefix: SERVER_REQUEST_ID_PREFIX,
      logger: this.#logger,
      // Like a response, a request is never dropped for a slow client (notifications may be, at the hard cap).
      send: (message) => {
        if (!signal.aborted) this.#transport.sendResponse(message, this.#codec ?? 'json');
      },
    });
    this.#handler = new ConnectionHandler({
      registry: options.registry,
      cancelSignal: signal,
      requestNetworkPolicy: (params, { cancelSignal }) => this.#requestNetworkPolicy(params, cancelSignal),
      probeLiveness: (timeoutMs) => {
        if (!signal.aborted) this.#transport.probeLiveness?.(timeoutMs);
      },
      environmentInfo: options.environmentInfo,
      executorEnv: options.executorEnv,
      systemConfigDir: options.systemConfigDir,
      logger: this.#logger,
      notify: (notification) => {
        if (this.#abort.signal.aborted) return;
        this.#metrics?.observeNotificationSent(notification);
        this.#transport.sendNotification(notificationMessage(notification.method, notification.params));
      },
    });
    this.#done = this.#run();
  }

  /** Settles once the connection ended: loop stopped, in-flight work abandoned, session detached. */
  get done(): Promise<void> {
    return this.#done;
  }

  /** The attached session's id, once initialized (for logs and tests). */
  get sessionId(): string | undefined {
    return this.#handler.sessionId;
  }

  /**
   * A decoded, classified inbound frame, and the codec it came in. Answers to the server's own
   * requests are matched at once, not queued behind requests in flight (an inline long-poll must
   * not hold up the decision a command waits for).
   */
  receive(message: RpcMessage, codec: CodecName, frameBytes = 0): void {
    this.#codec ??= codec;
    if (message.kind === 'response' || message.kind === 'error') {
      this.#receiveAnswer(message);
      return;
    }
    this.#inbox.push({ kind: 'message', message, codec, frameBytes });
  }

  /**
   * The transport's outbound backlog crossed its pause mark (`true`) or drained to its resume mark
   * (`false`): the attached session's process output is held back meanwhile, so a slow client
   * slows its own children instead of losing their output.
   */
  outboundPressure(congested: boolean): void {
    this.#handler.setOutboundCongested(congested);
  }

  /** A frame that could not be decoded; `reason` is the full text sent back with id -1. */
  receiveMalformed(reason: string, codec: CodecName): void {
    this.#codec ??= codec;
    this.#inbox.push({ kind: 'malformed', reason, codec, frameBytes: 0 });
  }

  /** The transport is gone (closed, EOF, error). Idempotent. */
  disconnected(reason?: string): void {
    if (this.#abort.signal.aborted) return;
    if (reason) this.#logger.debug('connection disconnected', { connection: this.#transport.label, reason });
    this.#abort.abort(new RpcError('transportClosed', reason ?? 'connection closed'));
    // Messages not dispatched yet are dropped now, not when the session lets go of this connection:
    // a detached session keeps its last attachment (for evict()) for the whole TTL, and queued
    // frames (up to MAX_PENDING_INBOUND_MESSAGES, each up to the frame limit) would stay with it.
    this.#inbox.clear();
    // Questions the client can no longer answer fail now (their connections are denied).
    this.#serverRequests.close(
      new TransportClosedError(undefined, `client connection closed: ${reason ?? 'connection closed'}`),
    );
    this.#inbox.wake();
  }

  /** `network/policyRequest` to this connection's client; the answer is validated. */
  async #requestNetworkPolicy(
    params: NetworkPolicyRequestParams,
    cancelSignal: AbortSignal,
  ): Promise<NetworkPolicyResponse> {
    const raw = await this.#serverRequests.request('network/policyRequest', params, cancelSignal);
    return decodeResult('network/policyRequest', raw);
  }

  #receiveAnswer(message: Extract<RpcMessage, { kind: 'response' | 'error' }>): void {
    if (this.#abort.signal.aborted) return;
    const outcome = this.#serverRequests.settle(message);
    if (outcome === 'stale') {
      this.#logger.debug('late answer to a server request', {
        connection: this.#transport.label,
        id: message.id,
      });
    } else if (outcome === 'unknown') {
      // As the original: an answer to a request that was never sent is a protocol violation.
      this.#close(`unexpected client ${message.kind} for id ${String(message.id)}`);
    }
  }

  async #run(): Promise<void> {
    try {
      // One event per call of `#step`: a suspended async function keeps the values of its
      // registers, so a loop that held the last event here while awaiting the next one kept
      // that frame's message (up to the 64 MiB frame limit) alive for as long as the
      // connection stayed quiet.
      while (await this.#step()) {}
    } catch (error) {
      this.#logger.error('connection loop failed', { connection: this.#transport.label, error });
      this.#close('internal error');
    } finally {
      // In-flight requests are abandoned, not awaited: their cancel signal fired, and one blocked
      // on a child (a write to a full stdin pipe) must not hold up shutdown.
      this.disconnected();
      this.#handler.detach();
      this.#metrics?.observeConnection('close');
    }
  }

  /** Takes the next inbound event and handles it; false ends the connection. */
  async #step(): Promise<boolean> {
    const event = await this.#inbox.next();
    if (event === undefined) return false;
    if (!this.#handler.isSessionAttached()) {
      this.#logger.debug('connection evicted after session resume', {
        connection: this.#transport.label,
      });
      this.#close('session has been resumed by another connection');
      return false;
    }
    if (event.kind === 'malformed') {
      this.#logger.warn('ignoring malformed message', {
        connection: this.#transport.label,
        reason: event.reason,
      });
      this.#transport.sendResponse(
        errorMessage(-1, new RpcError('invalidRequest', event.reason)),
        event.codec,
      );
      return true;
    }
    return this.#dispatch(event.message, event.codec);
  }

  /** Handles one message; false ends the connection. */
  async #dispatch(message: RpcMessage, codec: CodecName): Promise<boolean> {
    switch (message.kind) {
      case 'request':
        return this.#dispatchRequest(message, codec);
      case 'notification':
        if (message.method !== 'initialized') {
          this.#close(`unexpected notification \`${message.method}\``);
          return false;
        }
        try {
          this.#handler.initialized();
          return true;
        } catch (error) {
          this.#close(error instanceof Error ? error.message : String(error));
          return false;
        }
      case 'response':
      case 'error':
        // Answers are matched on receipt (see `receive`); none reach the queue.
        this.#receiveAnswer(message);
        return !this.#abort.signal.aborted;
    }
  }

  async #dispatchRequest(
    request: Extract<RpcMessage, { kind: 'request' }>,
    codec: CodecName,
  ): Promise<boolean> {
    const { id, method, params } = request;
    const run = (): Promise<void> => this.#runRequest(id, method, params, codec, request.trace);
    if (!this.#lanes || !this.#handler.ready) {
      // Inline: later frames wait for this one (and handshake requests are always inline).
      await Promise.race([run(), this.#abortedPromise]);
      return !this.#abort.signal.aborted;
    }
    const lane =
      (METHODS as Record<string, { lane?: string }>)[method]?.lane === 'control'
        ? this.#lanes.control
        : this.#lanes.ordinary;
    void lane.run(run, this.#abort.signal).finally(() => this.#inbox.updateBackpressure());
    this.#inbox.updateBackpressure();
    return true;
  }

  async #runRequest(
    id: RequestId,
    method: string,
    params: unknown,
    codec: CodecName,
    trace: unknown,
  ): Promise<void> {
    // The caller's W3C trace context (no OpenTelemetry here): carried into this request's logs.
    const traceFields = readTraceContext(trace) ?? {};
    this.#logger.trace('request in', { connection: this.#transport.label, id, method, ...traceFields });
    let reply: RpcMessage;
    const startedMs = performance.now();
    try {
      const result = await this.#handler.handleRequest(method, params);
      this.#metrics?.observeRequest(method, (performance.now() - startedMs) / 1000);
      this.#metrics?.observeResult(method, result);
      reply = responseMessage(id, result ?? {});
      if (method === 'initialize' && asksForOutputBatches(params)) this.#transport.enableOutputBatches?.();
    } catch (error) {
      this.#metrics?.observeRequest(method, (performance.now() - startedMs) / 1000, error);
      reply = errorMessage(id, error);
      if (reply.kind === 'error' && reply.error.code === RPC_ERROR_NUMBERS.internal) {
        this.#logger.warn('request failed', {
          connection: this.#transport.label,
          id,
          method,
          error,
          ...traceFields,
        });
      }
    }
    // A request whose connection went away mid-flight is abandoned.
    if (this.#abort.signal.aborted) return;
    this.#logger.trace('response out', {
      connection: this.#transport.label,
      id,
      method,
      ok: reply.kind === 'response',
      ...traceFields,
    });
    this.#transport.sendResponse(reply, codec);
  }

  #close(reason: string): void {
    this.#logger.warn('closing connection', { connection: this.#transport.label, reason });
    this.#transport.close(reason);
    this.disconnected(reason);
  }
}

/** True when `initialize` params carry the execd extension flag `outputBatches: true`. */
function asksForOutputBatches(params: unknown): boolean {
  return (
    typeof params === 'object' &&
    params !== null &&
    (params as { outputBatches?: unknown }).outputBatches === true
  );
}
