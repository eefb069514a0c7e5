import {
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
} from '@execd/protocol';
import type { StartOptions } from '@execd/protocol/contract';
import { AcceptedChannelSource } from './accepted-channel-source.ts';
import {
  type ExecServerClientOptions,
  type ResolvedClientOptions,
  resolveClientOptions,
} from './client-options.ts';
import type { ClientState } from './client-state.ts';
import { ClientStateTracker } from './client-state-tracker.ts';
import { describeError, isTransportLoss } from './errors.ts';
import type { FrameChannel } from './frame-channel.ts';
import { NetworkPolicyRouter } from './network-policy-router.ts';
import { dispatchNotification, type NotificationTargets } from './notification-dispatch.ts';
import { ProcessRouter } from './process-router.ts';
import { type CallOptions, type ProcessLink, RemoteProcess } from './remote-process.ts';
import type { RpcConnection } from './rpc-connection.ts';
import { type RunOptions, type RunResult, runCommand } from './run.ts';
import { SessionCalls } from './session-calls.ts';
import { type HandshakeTimeouts, initializeSession, openConnection } from './session-handshake.ts';
import { SessionRecovery } from './session-recovery.ts';
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
  readonly #recovery: SessionRecovery;
  readonly #calls: SessionCalls;
  readonly #closed = new AbortController();
  readonly #state: ClientStateTracker;
  /** `fs/missingChanged` watch ids, for RemoteFileSystem. */
  readonly #missingChanged: Emitter<number>;
  readonly #link: ProcessLink;
  readonly #notificationTargets: NotificationTargets;
  #conn: RpcConnection | undefined;
  #sessionId = '';
  #initialize: InitializeResponse | undefined;
  #closing: Promise<void> | undefined;

  private constructor(options: ResolvedClientOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#state = new ClientStateTracker(options.logger, () => this.#sessionId);
    this.#missingChanged = new Emitter(options.logger);
    this.#router = new ProcessRouter({
      logger: options.logger,
      gapFillDelayMs: options.gapFillDelayMs,
      readyConnection: () => (this.#state.current === 'ready' ? this.#conn : undefined),
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
      call: (method, params, callOptions) => this.#calls.call(method, params, callOptions),
      closedSignal: this.#closed.signal,
      reportsWaitingForInput: () => this.#initialize?.environmentInfo?.capabilities.waitingForInput === true,
    };
    this.#recovery = new SessionRecovery({
      options,
      router: this.#router,
      closedSignal: this.#closed.signal,
      isRecovering: () => this.#state.current === 'recovering',
      connection: () => this.#conn,
      sessionId: () => this.#sessionId,
      handshake: (resumeSessionId, timeouts) => this.#handshake(resumeSessionId, timeouts),
      recovering: () => this.#state.set('recovering'),
      ready: () => this.#state.set('ready'),
      fail: (message) => this.#failAll(message),
    });
    this.#calls = new SessionCalls({
      state: this.#state,
      logger: options.logger,
      connection: () => this.#conn,
      recovery: () => this.#recovery.settled,
      lost: (conn, reason) => this.#onTransportLost(conn, reason),
    });
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
    if (this.#state.current === 'failed') throw new TransportClosedError(undefined, this.#state.failure);
    if (this.#state.current === 'closed')
      throw new TransportClosedError(undefined, 'exec-server client is closed');
    source.offer(channel);
    const conn = this.#conn;
    if (this.#state.current === 'ready' && conn !== undefined) {
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
    return this.#state.current;
  }

  /** The failure message once recovery failed. */
  get failure(): string | undefined {
    return this.#state.failure;
  }

  /** Calls `listener` on every state change; dispose the result to stop. */
  onStateChange(listener: (state: ClientState) => void): Disposable {
    return this.#state.onChange(listener);
  }

  /**
   * `process/start`. Notifications that arrive before the answer are kept. A start cut off by a
   * lost connection is not retried (it rejects with a TransportClosedError); once the session is
   * resumed the client terminates that process id in case the start reached the server.
   * `options.networkPolicyDecider` answers this process's `network/policyRequest`s.
   */
  async start(params: ExecParamsInput, options: StartOptions = {}): Promise<RemoteProcess> {
    const trace = activeTraceContext();
    const conn = await this.#calls.usableConnection();
    const processId = params.processId;
    const session = this.#router.route(processId);
    // A duplicate id is refused by the server: never replace a running process's decider.
    if (!session.started && session.pendingStarts === 0)
      session.network.decider = options.networkPolicyDecider;
    session.pendingStarts += 1;
    const request = conn.request('process/start', params, { trace });
    this.#recovery.startSent(request);
    try {
      const response = decodeResult('process/start', await request);
      session.started = true;
      return new RemoteProcess(this.#link, session, response.sandboxType);
    } catch (error) {
      if (isTransportLoss(error)) this.#recovery.orphan(processId);
      throw error;
    } finally {
      this.#recovery.startSettled(request);
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
      await this.#calls.call('environment/info', {}, { retry: true, timeoutMs }),
    );
  }

  /** `environment/status` (10 s deadline). */
  async environmentStatus(): Promise<EnvironmentStatus> {
    const timeoutMs = this.#options.environmentStatusTimeoutMs;
    return decodeResult(
      'environment/status',
      await this.#calls.call('environment/status', {}, { retry: true, timeoutMs }),
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
    return decodeResult(method, await this.#calls.call(method, params, options));
  }

  /** Calls `listener` with the watch id of each `fs/missingChanged`; dispose the result to stop. */
  onMissingChanged(listener: (watchId: number) => void): Disposable {
    return this.#missingChanged.event(listener);
  }

  /** `process/list` (execd servers only; -32601 elsewhere). */
  async listProcesses(): Promise<ProcessListResponse> {
    return decodeResult('process/list', await this.#calls.call('process/list', {}, { retry: true }));
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
    this.#state.set('closed');
    this.#closed.abort(new ExecError('aborted', 'exec-server client closed'));
    this.#router.dispose();
    this.#options.channelSource?.close();
    await this.#conn?.close();
    await this.#recovery.settled;
  }

  /** Opens a connection, makes it current and runs `initialize` + `initialized` on it. */
  async #handshake(resumeSessionId: string | undefined, timeouts: HandshakeTimeouts): Promise<RpcConnection> {
    let conn: RpcConnection | undefined;
    conn = await openConnection(this.#options, timeouts.connectTimeoutMs, this.#closed.signal, {
      onNotification: (method, params) => this.#onNotification(conn, method, params),
      // Answered on the connection that asked, whichever is current: the server matches the id.
      onNetworkPolicyRequest: (request, context) => this.#network.decide(request, context),
      onClose: (reason) => this.#onTransportLost(conn, reason),
    });
    if (this.#state.current === 'closed') {
      conn.terminate('client closed');
      throw new TransportClosedError(undefined, 'exec-server client is closed');
    }
    this.#conn = conn;
    try {
      const response = await initializeSession(
        conn,
        this.#options,
        resumeSessionId,
        timeouts.initializeTimeoutMs,
      );
      this.#sessionId = response.sessionId;
      this.#initialize ??= response;
      conn.notify('initialized', {});
      return conn;
    } catch (error) {
      conn.terminate(`initialize failed: ${describeError(error)}`);
      throw error;
    }
  }

  #onNotification(conn: RpcConnection | undefined, method: string, params: unknown): void {
    if (conn === undefined || conn !== this.#conn) return;
    dispatchNotification(this.#notificationTargets, method, params);
  }

  #onTransportLost(conn: RpcConnection | undefined, reason: string): void {
    if (conn === undefined || conn !== this.#conn || this.#state.current !== 'ready') return;
    this.#recovery.connectionLost(reason);
  }

  #failAll(message: string): void {
    this.#logger.warn('exec-server session could not be resumed', { message });
    this.#state.recordFailure(message);
    this.#router.failAll(message);
    this.#state.set('failed');
    this.#conn?.terminate('session recovery failed');
  }
}
