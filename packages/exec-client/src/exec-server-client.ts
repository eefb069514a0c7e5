import { setTimeout as sleep } from 'node:timers/promises';
import {
  abortedBy,
  type ClientRequestMethod,
  decodeResult,
  Emitter,
  type EnvironmentInfo,
  type EnvironmentStatus,
  ExecError,
  type ExecParamsInput,
  type InitializeResponse,
  type Logger,
  type ParamsInputOf,
  type ProcessListResponse,
  type ResultOf,
  TransportClosedError,
  untilAborted,
} from '@execd/protocol';
import type { StartOptions } from '@execd/protocol/contract';
import { AcceptedChannelSource } from './accepted-channel-source.ts';
import { reconnectDelayMs } from './backoff.ts';
import {
  type ExecServerClientOptions,
  type ResolvedClientOptions,
  resolveClientOptions,
} from './client-options.ts';
import type { ClientState } from './client-state.ts';
import { describeError, isRetryable, isTransportLoss } from './errors.ts';
import type { FrameChannel } from './frame-channel.ts';
import { NetworkPolicyRouter } from './network-policy-router.ts';
import { dispatchNotification, type NotificationTargets } from './notification-dispatch.ts';
import { ProcessRouter } from './process-router.ts';
import { type CallOptions, type ProcessLink, RemoteProcess } from './remote-process.ts';
import { RpcConnection } from './rpc-connection.ts';
import { type RunOptions, type RunResult, runCommand } from './run.ts';
import { activeTraceContext, loadOpenTelemetry } from './trace-propagation.ts';

/**
 * The exec-server client (the original's `ExecServerClient`): one WebSocket connection, a
 * session, and the processes started through it. Pushed events are ordered per process and
 * published each exactly once; a lost connection is recovered by resuming the session (spec
 * §2.3), after which reads and writes continue as if nothing happened, or every process fails
 * with `"{disconnect}; failed to resume exec-server session: {error}"`.
 */
export class ExecServerClient implements AsyncDisposable {
  readonly #options: ResolvedClientOptions;
  readonly #logger: Logger;
  readonly #router: ProcessRouter;
  readonly #network: NetworkPolicyRouter;
  readonly #inflightStarts = new Set<Promise<unknown>>();
  readonly #orphans = new Set<string>();
  readonly #closed = new AbortController();
  readonly #stateChanges: Emitter<ClientState>;
  /** `fs/missingChanged` watch ids, for RemoteFileSystem. */
  readonly #missingChanged: Emitter<number>;
  readonly #link: ProcessLink;
  readonly #notificationTargets: NotificationTargets;
  #conn: RpcConnection | undefined;
  #sessionId = '';
  #initialize: InitializeResponse | undefined;
  #state: ClientState = 'ready';
  #recovery: Promise<void> = Promise.resolve();
  #failure: string | undefined;
  #closing: Promise<void> | undefined;

  private constructor(options: ResolvedClientOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#stateChanges = new Emitter(options.logger);
    this.#missingChanged = new Emitter(options.logger);
    this.#router = new ProcessRouter({
      logger: options.logger,
      gapFillDelayMs: options.gapFillDelayMs,
      readyConnection: () => (this.#state === 'ready' ? this.#conn : undefined),
    });
    this.#network = new NetworkPolicyRouter({
      lookup: (processId) => this.#router.lookup(processId)?.network,
      decider: options.onNetworkPolicyRequest,
      onDecision: options.onNetworkPolicyDecision,
      logger: options.logger,
    });
    this.#notificationTargets = {
      router: this.#router,
      network: this.#network,
      missingChanged: this.#missingChanged,
      logger: options.logger,
    };
    this.#link = {
      call: (method, params, callOptions) => this.#call(method, params, callOptions),
      closedSignal: this.#closed.signal,
      reportsWaitingForInput: () => this.#initialize?.environmentInfo?.capabilities.waitingForInput === true,
    };
  }

  /** Connects, sends `initialize` (resuming `resumeSessionId` when given) and `initialized`. */
  static async connect(options: ExecServerClientOptions): Promise<ExecServerClient> {
    const client = new ExecServerClient(resolveClientOptions(options));
    await loadOpenTelemetry();
    try {
      await client.#handshake(client.#options.resumeSessionId, {
        connectTimeoutMs: client.#options.connectTimeoutMs,
        initializeTimeoutMs: client.#options.initializeTimeoutMs,
      });
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  /**
   * A client on a channel the executor opened (it dialled the host: `execd-server --connect`).
   * Its recovery does not dial: it waits for the channel the host hands to `replaceChannel`
   * (the executor's next dial) and resumes the session on it. The first channel never resumes:
   * `options.resumeSessionId` is refused with a `protocol` ExecError, as the original.
   */
  static async accept(
    channel: FrameChannel,
    options: Omit<ExecServerClientOptions, 'url' | 'command'> = {},
  ): Promise<ExecServerClient> {
    const source = new AcceptedChannelSource();
    let resolved: ResolvedClientOptions;
    try {
      resolved = resolveClientOptions(options, source);
    } catch (error) {
      channel.terminate();
      throw error;
    }
    const client = new ExecServerClient(resolved);
    await loadOpenTelemetry();
    source.offer(channel);
    try {
      await client.#handshake(undefined, {
        connectTimeoutMs: resolved.connectTimeoutMs,
        initializeTimeoutMs: resolved.initializeTimeoutMs,
      });
    } catch (error) {
      await client.close();
      throw error;
    } finally {
      source.attemptDone();
    }
    return client;
  }

  /**
   * Hands an accepted client the executor's new channel: the current connection (if any) is
   * retired and the session resumed on `channel`, asynchronously. Throws (and the caller closes
   * `channel`) when another replacement is still being tried (`protocol`, the original's "an
   * accepted exec-server replacement is already in progress"), when the client failed or closed
   * (`transportClosed`), or for a client that was not accepted (`protocol`). A replacement the
   * server refuses (-32010: the session is still attached elsewhere) is closed, and the next
   * one is waited for.
   */
  replaceChannel(channel: FrameChannel): void {
    const source = this.#options.channelSource;
    if (source === undefined) {
      throw new ExecError('protocol', 'only an accepted exec-server connection can be replaced directly');
    }
    if (this.#state === 'failed') throw new TransportClosedError(undefined, this.#failure);
    if (this.#state === 'closed') throw new TransportClosedError(undefined, 'exec-server client is closed');
    source.offer(channel);
    const conn = this.#conn;
    if (this.#state === 'ready' && conn !== undefined) {
      this.#onTransportLost(conn, 'exec-server connection replaced');
      conn.terminate('exec-server connection replaced');
    }
  }

  /** The session id (a UUID); stable across recoveries. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The server's description of itself from `initialize`, when it sent one (execd, Codex >= 0.169). */
  get initializeEnvironmentInfo(): EnvironmentInfo | undefined {
    return this.#initialize?.environmentInfo;
  }

  /** Where the client is (see {@link ClientState}). */
  get state(): ClientState {
    return this.#state;
  }

  /** The failure message once recovery failed. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Calls `listener` on every state change; dispose the result to stop. */
  onStateChange(listener: (state: ClientState) => void): Disposable {
    return this.#stateChanges.event(listener);
  }

  /**
   * `process/start`. Notifications that arrive before the answer are kept. A start cut off by a
   * lost connection is not retried (it rejects with a TransportClosedError); once the session is
   * resumed the client terminates that process id in case the start reached the server.
   * `options.networkPolicyDecider` answers this process's `network/policyRequest`s.
   */
  async start(params: ExecParamsInput, options: StartOptions = {}): Promise<RemoteProcess> {
    const trace = activeTraceContext();
    const conn = await this.#usableConnection();
    const processId = params.processId;
    const session = this.#router.route(processId);
    // A duplicate id is refused by the server: never replace a running process's decider.
    if (!session.started && session.pendingStarts === 0)
      session.network.decider = options.networkPolicyDecider;
    session.pendingStarts += 1;
    const request = conn.request('process/start', params, { trace });
    this.#inflightStarts.add(request);
    try {
      const response = decodeResult('process/start', await request);
      session.started = true;
      return new RemoteProcess(this.#link, session, response.sandboxType);
    } catch (error) {
      if (isTransportLoss(error)) this.#orphans.add(processId);
      throw error;
    } finally {
      this.#inflightStarts.delete(request);
      session.pendingStarts -= 1;
      if (!session.started && session.pendingStarts === 0) this.#router.unroute(session);
    }
  }

  /**
   * Runs a command to completion and collects its output: `run(['ls', '-l'])` runs the argv,
   * `run('make && make test')` runs `[shell, '-lc', command]` with the server's shell. Resolves
   * for any exit code; kills the process on `timeoutMs` (`timedOut: true`) or `cancelSignal`
   * (rejects with an `aborted` ExecError). See {@link RunOptions}.
   */
  run(command: string | readonly string[], options?: RunOptions): Promise<RunResult> {
    return runCommand(this, command, options);
  }

  /** `environment/info` (30 s deadline). */
  async environmentInfo(): Promise<EnvironmentInfo> {
    const timeoutMs = this.#options.environmentInfoTimeoutMs;
    return decodeResult(
      'environment/info',
      await this.#call('environment/info', {}, { retry: true, timeoutMs }),
    );
  }

  /** `environment/status` (10 s deadline). */
  async environmentStatus(): Promise<EnvironmentStatus> {
    const timeoutMs = this.#options.environmentStatusTimeoutMs;
    return decodeResult(
      'environment/status',
      await this.#call('environment/status', {}, { retry: true, timeoutMs }),
    );
  }

  /**
   * Sends one request and validates its result (the building block of `RemoteFileSystem`). With
   * `retry` it is sent again after a resumed session: only for requests that may run twice.
   */
  async request<M extends ClientRequestMethod>(
    method: M,
    params: ParamsInputOf<M>,
    options: CallOptions = { retry: false },
  ): Promise<ResultOf<M>> {
    return decodeResult(method, await this.#call(method, params, options));
  }

  /** Calls `listener` with the watch id of each `fs/missingChanged`; dispose the result to stop. */
  onMissingChanged(listener: (watchId: number) => void): Disposable {
    return this.#missingChanged.event(listener);
  }

  /** `process/list` (execd servers only; -32601 elsewhere). */
  async listProcesses(): Promise<ProcessListResponse> {
    return decodeResult('process/list', await this.#call('process/list', {}, { retry: true }));
  }

  /**
   * Closes the connection (the server keeps the session for its TTL, then kills its processes;
   * use `RemoteBackend.close` to terminate them at once). Followers end quietly. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #close(): Promise<void> {
    this.#setState('closed');
    this.#closed.abort(new ExecError('aborted', 'exec-server client closed'));
    this.#router.dispose();
    this.#options.channelSource?.close();
    await this.#conn?.close();
    await this.#recovery;
  }

  #setState(state: ClientState): void {
    if (this.#state === state || this.#state === 'closed') return;
    this.#logger.debug('exec-server client state', {
      from: this.#state,
      to: state,
      sessionId: this.#sessionId,
    });
    this.#state = state;
    this.#stateChanges.fire(state);
  }

  /** Opens a connection, makes it current and runs `initialize` + `initialized` on it. */
  async #handshake(
    resumeSessionId: string | undefined,
    timeouts: { readonly connectTimeoutMs: number; readonly initializeTimeoutMs: number },
  ): Promise<RpcConnection> {
    let conn: RpcConnection | undefined;
    conn = await RpcConnection.open({
      url: this.#options.url,
      command: this.#options.command,
      openChannel:
        this.#options.channelSource === undefined
          ? undefined
          : (timeoutMs, signal) => this.#options.channelSource!.next(timeoutMs, signal),
      token: this.#options.token,
      codec: this.#options.codec,
      connectTimeoutMs: timeouts.connectTimeoutMs,
      keepaliveIntervalMs: this.#options.keepaliveIntervalMs,
      maxFrameBytes: this.#options.maxFrameBytes,
      logger: this.#logger,
      cancelSignal: this.#closed.signal,
      onNotification: (method, params) => this.#onNotification(conn, method, params),
      // Answered on the connection that asked, whichever is current: the server matches the id.
      onNetworkPolicyRequest: (request, context) => this.#network.decide(request, context),
      onClose: (reason) => this.#onTransportLost(conn, reason),
    });
    if (this.#state === 'closed') {
      conn.terminate('client closed');
      throw new TransportClosedError(undefined, 'exec-server client is closed');
    }
    this.#conn = conn;
    try {
      const raw = await conn.request(
        'initialize',
        // `waitingForInput`: opt in to the execd extension (an original server ignores it).
        {
          clientName: this.#options.clientName,
          resumeSessionId,
          waitingForInput: true,
          // `outputBatches`: several output chunks per frame (execd extension), on msgpack only:
          // an original server speaks JSON only, and the JSON wire keeps one chunk per notification.
          ...(this.#options.codec === 'msgpack' ? { outputBatches: true } : {}),
        },
        { timeoutMs: timeouts.initializeTimeoutMs },
      );
      const response = decodeResult('initialize', raw);
      if (resumeSessionId !== undefined && response.sessionId !== resumeSessionId) {
        throw new ExecError(
          'protocol',
          `exec-server initialized an unexpected session ${response.sessionId}`,
        );
      }
      this.#sessionId = response.sessionId;
      this.#initialize ??= response;
      conn.notify('initialized', {});
      return conn;
    } catch (error) {
      conn.terminate(`initialize failed: ${describeError(error)}`);
      throw error;
    }
  }

  async #usableConnection(cancelSignal?: AbortSignal): Promise<RpcConnection> {
    for (;;) {
      if (cancelSignal?.aborted) throw abortedBy(cancelSignal, 'the call');
      switch (this.#state) {
        case 'ready': {
          const conn = this.#conn!;
          if (conn.isOpen) return conn;
          // The socket is going away but its close event has not run yet.
          this.#onTransportLost(conn, conn.closeReason ?? 'websocket closing');
          continue;
        }
        case 'recovering':
          await (cancelSignal === undefined ? this.#recovery : untilAborted(this.#recovery, cancelSignal));
          continue;
        case 'failed':
          throw new TransportClosedError(undefined, this.#failure);
        case 'closed':
          throw new TransportClosedError(undefined, 'exec-server client is closed');
      }
    }
  }

  async #call(method: ClientRequestMethod, params: unknown, options: CallOptions): Promise<unknown> {
    // Read before the first await: the caller's context, whenever the request goes out.
    const trace = activeTraceContext();
    for (;;) {
      const conn = await this.#usableConnection(options.cancelSignal);
      try {
        return await conn.request(method, params, { ...options, trace });
      } catch (error) {
        const lost = ExecError.is(error) && error.code === 'transportClosed' && !conn.isOpen;
        if (options.retry && lost && this.#state !== 'closed') {
          this.#logger.debug('retrying a request after the connection was lost', { method });
          continue;
        }
        throw error;
      }
    }
  }

  #onNotification(conn: RpcConnection | undefined, method: string, params: unknown): void {
    if (conn === undefined || conn !== this.#conn) return;
    dispatchNotification(this.#notificationTargets, method, params);
  }

  #onTransportLost(conn: RpcConnection | undefined, reason: string): void {
    if (conn === undefined || conn !== this.#conn || this.#state !== 'ready') return;
    const disconnect = `exec-server transport disconnected: ${reason}`;
    if (this.#options.command !== undefined) {
      // The server ended the session with its stdin (it kills its processes at EOF): there is
      // nothing to resume, as the original's stdio client (spec §2.1).
      this.#failAll(disconnect);
      return;
    }
    this.#logger.debug('exec-server connection lost; resuming the session', { reason });
    this.#setState('recovering');
    this.#recovery = this.#recover(disconnect);
  }

  async #recover(disconnect: string): Promise<void> {
    // Starts cut off by the loss settle first, so the set of processes to recover is final.
    await Promise.allSettled([...this.#inflightStarts]);
    const options = this.#options;
    const deadline = performance.now() + options.recoveryTimeoutMs;
    let lastError: unknown = new ExecError(
      'connectTimeout',
      'no reconnect attempt fit in the recovery deadline',
    );
    for (let attempt = 0; this.#state === 'recovering'; attempt++) {
      const delay = reconnectDelayMs(attempt, {
        initialMs: options.recoveryInitialDelayMs,
        maxMs: options.recoveryMaxDelayMs,
        jitter: 0.2,
      });
      if (performance.now() + delay >= deadline) break;
      try {
        if (delay > 0) await sleep(delay, undefined, { signal: this.#closed.signal });
        await this.#resumeOnce(deadline);
        if (!this.#conn?.isOpen) throw new TransportClosedError(undefined, 'connection lost during recovery');
      } catch (error) {
        if (this.#state !== 'recovering') return;
        lastError = error;
        this.#logger.debug('session resume attempt failed', { attempt, error });
        if (!isRetryable(error)) break;
        continue;
      }
      this.#setState('ready');
      this.#router.settleAll();
      return;
    }
    if (this.#state !== 'recovering') return;
    this.#failAll(`${disconnect}; failed to resume exec-server session: ${describeError(lastError)}`);
  }

  async #resumeOnce(deadline: number): Promise<void> {
    const remaining = (): number => Math.max(1, deadline - performance.now());
    try {
      await this.#resumeOn(
        await this.#handshake(this.#sessionId, {
          connectTimeoutMs: Math.min(this.#options.connectTimeoutMs, remaining()),
          initializeTimeoutMs: Math.min(this.#options.initializeTimeoutMs, remaining()),
        }),
        remaining,
      );
    } finally {
      // An accepted client's replacement slot frees once its attempt ended, either way.
      this.#options.channelSource?.attemptDone();
    }
  }

  /** Terminates the orphans and re-reads every live process on a resumed connection. */
  async #resumeOn(conn: RpcConnection, remaining: () => number): Promise<void> {
    try {
      const orphans = [...this.#orphans];
      this.#orphans.clear();
      // Handled at once: if this attempt fails midway nobody awaits them, and an orphan whose
      // terminate did not go through is kept for the next attempt.
      const cleanup = orphans.map((processId) =>
        conn
          .request('process/terminate', { processId }, { cleanup: true, timeoutMs: remaining() })
          .catch(() => this.#orphans.add(processId)),
      );
      await Promise.all(
        this.#router.live().map(async (session) => {
          try {
            await this.#router.readAndMerge(conn, session, remaining());
          } catch (error) {
            if (isTransportLoss(error) || (ExecError.is(error) && error.code === 'aborted')) throw error;
            this.#router.failProcess(conn, session, error);
          }
        }),
      );
      await Promise.allSettled(cleanup);
    } catch (error) {
      conn.terminate(`session recovery failed: ${describeError(error)}`);
      throw error;
    }
  }

  #failAll(message: string): void {
    this.#logger.warn('exec-server session could not be resumed', { message });
    this.#failure = message;
    this.#router.failAll(message);
    this.#setState('failed');
    this.#conn?.terminate('session recovery failed');
  }
}
