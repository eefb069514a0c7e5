import {
  Emitter,
  ExecError,
  type ExecParams,
  type ExecResponse,
  type Logger,
  type ProcessListResponse,
  type ReadParams,
  type ReadResponse,
  type ResizeParams,
  type ResizeResponse,
  RpcError,
  type SignalParams,
  type TerminateParams,
  type TerminateResponse,
  type WriteParams,
  type WriteResponse,
} from '@execd/protocol';
import type { NetworkDenial } from '@execd/protocol/contract';
import { SandboxRootPins, withManagedNetwork } from '@execd/sandboxing';
import { childEnv } from '../env/child-env.ts';
import type { ProcessNotification, ProcessTable } from '../types.ts';
import { longPollRead } from './long-poll-read.ts';
import { OutputFlow } from './output-flow.ts';
import { type NetworkPolicyRequester, ProcessNetwork } from './process-network.ts';
import { ProcessRecord } from './process-record.ts';
import {
  applyShellSnapshot,
  createShellSnapshotCache,
  type PreparedLaunch,
  type ShellSnapshotPreparer,
} from './shell-snapshots.ts';
import type { Spawner } from './spawner.ts';
import { requireArgv, resolveStartCwd, validateStartPreconditions } from './start-validation.ts';
import { type LocalProcessTableOptions, resolveTableOptions, type TableConfig } from './table-options.ts';

export type { LocalProcessTableOptions } from './table-options.ts';

/** Per-process options of {@link LocalProcessTable.startProcess}. */
export interface ProcessStartOptions {
  /**
   * Asks about this process's hosts (a `proxied` process with policy callbacks) instead of the
   * table's `networkPolicyRequester`.
   */
  readonly networkPolicyRequester?: NetworkPolicyRequester | undefined;
}

/** A started process: the `process/start` result and its record. */
export interface StartedProcess {
  readonly response: ExecResponse;
  readonly record: ProcessRecord;
}

/**
 * The per-session process table (the original's `LocalProcess`): processes keyed by a
 * client-chosen id, each with seq-numbered retained output, a long-poll read, de-duplicated
 * writes and a retention period after close. Implements every `process/*` method with the
 * original's semantics and error texts (spec §2.4, §3.1).
 *
 * Memory: output is consumed as fast as the child writes it and kept only up to the retention
 * limits (oldest evicted); notifications are handed synchronously to the subscribers. A process
 * nobody reads therefore never blocks and never grows beyond its retention; a slow reader sees
 * `firstRetainedSeq` instead of a silent gap. A subscriber that cannot keep up (a server whose
 * client reads slowly) calls `setOutputPaused(true)`: the table then stops taking output, its
 * children block in `write` once their pipes fill, and nothing is evicted unseen.
 */
export class LocalProcessTable implements ProcessTable, AsyncDisposable {
  readonly #records = new Map<string, ProcessRecord>();
  /**
   * The writable roots of this table's sandboxes, pinned at first use (one table per session:
   * a root a command rearranged under the session is refused; a new session resolves anew).
   */
  readonly #rootPins: SandboxRootPins;
  readonly #notifications: Emitter<ProcessNotification>;
  readonly #flow = new OutputFlow();
  readonly #pendingStarts = new Set<Promise<unknown>>();
  readonly #retentionTimers = new Set<NodeJS.Timeout>();
  readonly #released = new Set<Promise<void>>();
  readonly #config: TableConfig;
  readonly #logger: Logger;
  #shutdown: Promise<void> | undefined;
  // Aborted at shutdown: stops waiting for snapshot captures of pending starts.
  readonly #closing = new AbortController();
  #ownSnapshots: ReturnType<typeof createShellSnapshotCache> | undefined;

  constructor(options: LocalProcessTableOptions = {}) {
    this.#config = resolveTableOptions(options);
    this.#rootPins = this.#config.sandboxRootPins ?? new SandboxRootPins();
    this.#logger = this.#config.logger;
    this.#notifications = new Emitter(this.#logger);
  }

  /** `process/start`. */
  async start(params: ExecParams): Promise<ExecResponse> {
    return (await this.startProcess(params)).response;
  }

  /**
   * `process/start`, also returning the live record (in-process handles follow its history).
   * `options.networkPolicyRequester` answers this process's network questions.
   * @internal
   */
  startProcess(params: ExecParams, options: ProcessStartOptions = {}): Promise<StartedProcess> {
    const starting = this.#start(params, options);
    this.#pendingStarts.add(starting);
    const forget = (): void => void this.#pendingStarts.delete(starting);
    starting.then(forget, forget);
    return starting;
  }

  /** `process/read`: a long-poll (spec §2.4); `cancelSignal` abandons the wait. */
  read(params: ReadParams, cancelSignal?: AbortSignal): Promise<ReadResponse> {
    return longPollRead((processId) => this.#records.get(processId), params, cancelSignal);
  }

  /** `process/write`: statuses are values; only an empty `writeId` or a broken stdin throw. */
  async write(params: WriteParams): Promise<WriteResponse> {
    if (params.writeId.length === 0) throw new RpcError('invalidParams', 'writeId must not be empty');
    const record = this.#records.get(params.processId);
    if (record === undefined) return { status: 'unknownProcess' };
    return { status: await record.write(params.chunk, params.writeId) };
  }

  /** `process/signal` (`interrupt`): SIGINT to a running child's process group, else nothing. */
  async signal(params: SignalParams): Promise<Record<string, never>> {
    await this.#records.get(params.processId)?.interrupt();
    return {};
  }

  /**
   * The connections a `proxied` process's proxy refused so far, oldest first (for "approve and
   * retry"); empty for other processes, undefined for an unknown id. Also in `network/policyDecision`
   * notifications, and a non-zero exit after a denial reports `sandboxDenied: true`.
   */
  networkDenials(processId: string): readonly NetworkDenial[] | undefined {
    return this.#records.get(processId)?.networkDenials();
  }

  /**
   * `process/terminate`: SIGKILL to the group; cancels a start in progress. For a `proxied`
   * process it also abandons pending network-policy questions (even after the exit).
   */
  async terminate(params: TerminateParams): Promise<TerminateResponse> {
    const record = this.#records.get(params.processId);
    if (record === undefined) return { running: false };
    if (record.state === 'starting') {
      // The start sees its entry gone, kills the child and fails with "start was cancelled".
      this.#records.delete(params.processId);
      return { running: true };
    }
    return { running: record.terminate() };
  }

  /** `process/resize` (execd addition): tty children only. */
  async resize(params: ResizeParams): Promise<ResizeResponse> {
    return { resized: this.#records.get(params.processId)?.resize(params.cols, params.rows) ?? false };
  }

  /** `process/list` (execd addition): every entry, in start order. */
  list(): ProcessListResponse {
    return { processes: [...this.#records.values()].map((record) => record.listEntry()) };
  }

  /** Every notification of every process, in emission order (synchronously, as it happens). */
  subscribe(listener: (notification: ProcessNotification) => void): Disposable {
    return this.#notifications.event(listener);
  }

  /**
   * Flow control for the subscriber (the server pauses while its client's backlog is high):
   * paused, no process's output is taken (each child blocks once its pipe is full) and exits wait
   * behind their output; every RPC is still answered, `terminate` still kills. Resuming delivers
   * everything in seq order. Shutdown resumes for good.
   */
  setOutputPaused(paused: boolean): void {
    if (paused === this.#flow.paused || (paused && this.#shutdown !== undefined)) return;
    this.#logger.debug(paused ? 'pausing process output' : 'resuming process output', {
      processes: this.#records.size,
    });
    this.#flow.setPaused(paused);
  }

  /** True while {@link setOutputPaused} holds the output back. */
  get outputPaused(): boolean {
    return this.#flow.paused;
  }

  /** Kills every process tree, cancels pending starts and waits until all are reaped. Idempotent. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutdownAll();
    return this.#shutdown;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  async #start(requested: ExecParams, options: ProcessStartOptions): Promise<StartedProcess> {
    this.#refuseIfShutDown();
    validateStartPreconditions(requested, process.platform);
    // The sandbox as enforced: `enforceManagedNetwork` turns a full network into `proxied`.
    const params = requested.enforceManagedNetwork
      ? { ...requested, sandbox: withManagedNetwork(requested.sandbox) }
      : requested;
    let launch: PreparedLaunch = {
      argv: params.argv,
      cwd: resolveStartCwd(params.cwd),
      env: childEnv(params, this.#config.executorEnv, { defaultExcludes: this.#config.defaultEnvExcludes }),
      arg0: params.arg0,
    };
    const snapshots = this.#snapshots(params);
    if (snapshots !== undefined) {
      launch = await applyShellSnapshot(snapshots, params, launch, {
        cancelSignal: this.#closing.signal,
        logger: this.#logger,
      });
    }
    requireArgv(launch.argv);
    const processId = params.processId;
    // No await between these checks and the insert: of two concurrent duplicate starts, one wins.
    this.#refuseIfShutDown();
    if (this.#records.has(processId))
      throw new RpcError('invalidRequest', `process ${processId} already exists`);
    const record = this.#newRecord(params);
    this.#records.set(processId, record);
    this.#logger.debug('starting process', { processId, argv: launch.argv, tty: params.tty });
    let launched: Awaited<ReturnType<Spawner>>;
    let network: ProcessNetwork | undefined;
    try {
      // One proxy per `proxied` process, listening before its command exists.
      if (params.sandbox?.network === 'proxied')
        network = await this.#startNetwork(params, options.networkPolicyRequester);
      launched = await this.#config.spawner({
        processId,
        ...launch,
        tty: params.tty,
        stdin: params.pipeStdin ? 'pipe' : 'null',
        sandbox: params.sandbox,
        managedNetwork:
          network === undefined ? undefined : { proxy: network.proxy, bridge: this.#config.networkBridge },
        drainTimeoutMs: this.#config.drainTimeoutMs,
        rootPins: this.#rootPins,
        hiddenPaths: this.#config.sandboxHiddenPaths,
        limits: this.#config.commandLimits,
        preparedSandboxes: this.#config.preparedSandboxes,
        forkServer: this.#config.forkServer,
      });
    } catch (error) {
      await network?.close();
      if (this.#records.get(processId) === record) this.#records.delete(processId);
      this.#logger.debug('process start failed', { processId, error });
      // RpcErrors (e.g. -32602 for an unusable sandbox) pass through; anything else is -32603.
      if (ExecError.is(error) && error instanceof Error && 'toWire' in error) throw error;
      throw new RpcError('internal', error instanceof Error ? error.message : String(error), {
        cause: error,
      });
    }
    if (this.#records.get(processId) !== record) {
      await launched.process.close();
      network?.attach(launched.network);
      await network?.close();
      throw new RpcError('invalidRequest', `process ${processId} start was cancelled`);
    }
    record.attach(launched, network);
    return { response: { processId, sandboxType: launched.sandboxType }, record };
  }

  /** The process's proxy; its questions go to `requester`, else to the table's requester. */
  #startNetwork(params: ExecParams, requester: NetworkPolicyRequester | undefined): Promise<ProcessNetwork> {
    return ProcessNetwork.start({
      params,
      requester: requester ?? this.#config.networkPolicyRequester,
      resolver: this.#config.networkResolver,
      emit: (notification) => this.#notifications.fire(notification),
      logger: this.#logger,
    });
  }

  #refuseIfShutDown(): void {
    if (this.#shutdown !== undefined)
      throw new RpcError('internal', 'exec-server process table is shut down');
  }

  #snapshots(params: ExecParams): ShellSnapshotPreparer | undefined {
    const configured = this.#config.shellSnapshots;
    if (params.shellSnapshot === undefined || configured === null) return undefined;
    if (configured !== undefined) return configured;
    this.#ownSnapshots ??= createShellSnapshotCache(this.#logger, this.#config.defaultEnvExcludes);
    return this.#ownSnapshots;
  }

  #newRecord(params: ExecParams): ProcessRecord {
    const config = this.#config;
    return new ProcessRecord({
      processId: params.processId,
      argv: params.argv,
      cwd: params.cwd,
      tty: params.tty,
      pipeStdin: params.pipeStdin ?? false,
      retention: config.retention,
      history: config.history,
      writeIdCapacity: config.writeIdsPerProcess,
      exitGraceMs: config.exitGraceMs,
      isSandboxDenied: config.isSandboxDenied,
      flow: this.#flow,
      emit: (notification) => this.#notifications.fire(notification),
      onClosed: (closed) => this.#scheduleRemoval(closed),
      logger: this.#logger,
    });
  }

  #scheduleRemoval(record: ProcessRecord): void {
    if (this.#shutdown !== undefined) return;
    const timer = setTimeout(() => {
      this.#retentionTimers.delete(timer);
      if (this.#records.get(record.processId) === record) this.#records.delete(record.processId);
      this.#logger.debug('closed process evicted', { processId: record.processId });
      this.#release(record);
    }, this.#config.exitedRetentionMs);
    // Retention alone must not keep a process (e.g. a CLI) alive.
    timer.unref();
    this.#retentionTimers.add(timer);
  }

  #release(record: ProcessRecord): void {
    const releasing = record.shutdown(this.#config.shutdownDrainTimeoutMs).catch((error: unknown) => {
      this.#logger.warn('releasing process failed', { processId: record.processId, error });
    });
    this.#released.add(releasing);
    releasing.then(() => this.#released.delete(releasing));
  }

  async #shutdownAll(): Promise<void> {
    this.#closing.abort();
    // Killed children's last output must drain for their streams to end (and `closed` to come).
    this.#flow.close();
    for (const timer of this.#retentionTimers) clearTimeout(timer);
    this.#retentionTimers.clear();
    const records = [...this.#records.values()];
    for (const record of records) {
      // A start in progress sees its entry gone, kills its child and fails as cancelled.
      if (record.state === 'starting') this.#records.delete(record.processId);
      else this.#release(record);
    }
    // Entries stay readable while their children die, so a pending long-poll sees `closed`.
    await Promise.allSettled([...this.#pendingStarts, ...this.#released, this.#ownSnapshots?.close()]);
    this.#records.clear();
    // Wake any remaining long-poll: it now sees its process gone.
    for (const record of records) record.changed.notify();
    this.#notifications.clear();
    this.#logger.debug('process table shut down', { processes: records.length });
  }
}
