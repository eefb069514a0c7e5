import {
  ChangeSignal,
  type Logger,
  type OutputStream,
  type ProcessListEntry,
  type ReadResponse,
  RpcError,
  type SandboxType,
  type WriteStatus,
} from '@execd/protocol';
import type { EventLog, EventLogLimits, NetworkDenial, SequencedEvent } from '@execd/protocol/contract';
import { InputWaitWatcher, type SpawnedProcess } from '@execd/pty-utils';
import type { SpawnedLimits } from '@execd/sandboxing';
import type { ProcessNotification } from '../types.ts';
import { awaitOutputBeforeExit, type OutputFlow } from './output-flow.ts';
import { ProcessEvents } from './process-events.ts';
import type { ProcessNetwork } from './process-network.ts';
import type { RetentionLimits } from './retained-output.ts';
import { exitSandboxDenied } from './sandbox-denial.ts';
import type { LocalSpawnResult, SandboxDenialCheck } from './spawner.ts';
import { IdempotentWrites } from './write-ids.ts';

/** Everything a ProcessRecord needs from its table. */
export interface ProcessRecordInit {
  readonly processId: string;
  readonly argv: readonly string[];
  /** The request's cwd URI, reported by `process/list`. */
  readonly cwd: string;
  readonly tty: boolean;
  readonly pipeStdin: boolean;
  readonly retention: RetentionLimits;
  readonly history: EventLogLimits;
  readonly writeIdCapacity: number;
  readonly exitGraceMs: number;
  readonly isSandboxDenied: SandboxDenialCheck;
  /** The table's flow switch: while paused, output is left in the child's pipe (backpressure). */
  readonly flow: OutputFlow;
  readonly emit: (notification: ProcessNotification) => void;
  readonly onClosed: (record: ProcessRecord) => void;
  readonly logger: Logger;
}

/** Life of one entry, as `process/list` reports it. */
export type ProcessState = 'starting' | 'running' | 'exited' | 'closed';

/**
 * One process of a table: its child, its seq counter and retained output, its exit, and the
 * write ids it accepted (the original's `Running` entry; a `Starting` entry before `attach`).
 *
 * ```
 *  starting --attach--> running --child exits--> exited --every stream ended--> closed
 *                          \------ streams end first: closed waits for the exit ------/
 * ```
 * One seq counter, from 1, numbers output chunks, the exit and the close, in emission order.
 * Output may follow the exit (a grandchild holding the pipe); `closed` is always last.
 */
export class ProcessRecord {
  readonly processId: string;
  readonly tty: boolean;
  readonly startedAtMs: number = Date.now();
  /** Woken on every event; long-polls and event followers wait on it. */
  readonly changed: ChangeSignal = new ChangeSignal();
  /** Replay history for in-process `events()`; outlives the table entry. */
  readonly history: EventLog;
  readonly #init: ProcessRecordInit;
  readonly #events: ProcessEvents;
  readonly #writes: IdempotentWrites;
  #spawned: SpawnedProcess | undefined;
  #network: ProcessNetwork | undefined;
  #sandboxType: SandboxType = 'none';
  #exitCode: number | undefined;
  #sandboxDenied = false;
  #streamsOpen = true;
  #closed = false;
  #terminationRequested = false;
  #done: Promise<void> = Promise.resolve();
  /** Tty children on Linux: tells when the terminal waits for input (undefined otherwise). */
  #inputWait: InputWaitWatcher | undefined;
  /** Listeners of in-process handles (`LocalExecProcess.onWaitingForInput`). */
  readonly #waitingListeners = new Set<(afterSeq: number) => void>();

  constructor(init: ProcessRecordInit) {
    this.#init = init;
    this.processId = init.processId;
    this.tty = init.tty;
    this.#events = new ProcessEvents(init.retention, init.history);
    this.history = this.#events.history;
    this.#writes = new IdempotentWrites(init.writeIdCapacity);
  }

  get state(): ProcessState {
    if (this.#spawned === undefined) return 'starting';
    if (this.#closed) return 'closed';
    return this.#exitCode === undefined ? 'running' : 'exited';
  }

  get sandboxType(): SandboxType {
    return this.#sandboxType;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** True once `terminate` (or a shutdown) asked the child to die. */
  get terminationRequested(): boolean {
    return this.#terminationRequested;
  }

  /**
   * Starting -> running: takes ownership of the child (and of its managed network, for a
   * `proxied` process) and starts following its output and exit.
   */
  attach(launched: LocalSpawnResult, network?: ProcessNetwork): void {
    if (this.#spawned !== undefined) throw new Error(`process ${this.processId} is already attached`);
    this.#spawned = launched.process;
    this.#network = network;
    network?.attach(launched.network);
    this.#sandboxType = launched.sandboxType;
    const spawned = launched.process;
    if (spawned.tty && process.platform === 'linux') {
      this.#inputWait = new InputWaitWatcher(spawned.pid, { onWaiting: () => this.#reportWaiting() });
    }
    const outputDone = this.#pumpOutput(spawned);
    this.#done = Promise.all([outputDone, this.#watchExit(spawned, outputDone, launched.limits)]).then(
      () => {},
    );
  }

  /** The connections a `proxied` process's proxy refused, oldest first (empty otherwise). */
  networkDenials(): readonly NetworkDenial[] {
    return this.#network?.denials() ?? [];
  }

  /** One `process/read` page (spec §2.4): `maxBytes` undefined = unlimited. */
  read(afterSeq: number, maxBytes: number | undefined): ReadResponse {
    const nextSeq = this.#events.nextSeq;
    const page = this.#events.output.page(afterSeq, maxBytes ?? Number.POSITIVE_INFINITY);
    const last = page.chunks.at(-1);
    const response: ReadResponse = {
      chunks: page.chunks,
      nextSeq: maxBytes !== undefined && last !== undefined ? last.seq + 1 : nextSeq,
      exited: this.#exitCode !== undefined,
      exitCode: this.#exitCode ?? null,
      closed: this.#closed,
      failure: null,
      sandboxDenied: this.#sandboxDenied,
    };
    if (page.firstRetainedSeq !== undefined) response.firstRetainedSeq = page.firstRetainedSeq;
    // Only a page that reaches the last event can say what follows it.
    if (this.#inputWait?.waiting === true && response.nextSeq === nextSeq) {
      response.waitingForInput = true;
    }
    return response;
  }

  /**
   * Every event after `afterSeq` still known: the replay history, or (when the cursor is older
   * than the history) the retained output merged with the exit and close events.
   * `firstRetainedSeq` is set when events after `afterSeq` were evicted from both.
   */
  eventsAfter(afterSeq: number): { events: SequencedEvent[]; firstRetainedSeq: number | undefined } {
    return this.#events.eventsAfter(afterSeq);
  }

  /** `process/write` for this entry (the empty-id check and unknown ids are the table's). */
  async write(chunk: Uint8Array, writeId: string): Promise<WriteStatus> {
    const spawned = this.#spawned;
    if (spawned === undefined) return 'starting';
    if (!this.tty && !this.#init.pipeStdin) return 'stdinClosed';
    // An id already accepted (or being written) is not written again.
    await this.#writes.once(writeId, () => {
      this.#inputWait?.activity();
      return spawned.write(chunk).catch((error: unknown) => {
        throw new RpcError('internal', 'failed to write to process stdin', { cause: error });
      });
    });
    return 'accepted';
  }

  /**
   * SIGINT to the command's process group while running (inside its sandbox for a sandboxed
   * one: see sandboxing's `containProcess`); a no-op when starting or exited.
   */
  async interrupt(): Promise<void> {
    if (this.#spawned === undefined || this.#exitCode !== undefined) return;
    try {
      await this.#spawned.interrupt();
    } catch (error) {
      throw new RpcError('internal', `failed to signal process: ${describe(error)}`, { cause: error });
    }
  }

  /**
   * SIGKILL to the process group; true when the child was still running. Also abandons the
   * network-policy questions of a `proxied` process, even after its exit (a descendant may wait).
   */
  terminate(): boolean {
    this.#network?.cancelPendingDecisions();
    if (this.#spawned === undefined) return false;
    if (this.#exitCode !== undefined) {
      // The command is done, but what it left (a daemon holding its output open) dies too.
      if (!this.#closed) this.#spawned.kill('SIGKILL');
      return false;
    }
    this.#terminationRequested = true;
    this.#init.logger.debug('terminating process', { processId: this.processId });
    this.#spawned.kill('SIGKILL');
    return true;
  }

  /** Resizes a running tty child; false for pipes, or once exited. */
  resize(cols: number, rows: number): boolean {
    if (this.#spawned === undefined || !this.tty || this.#exitCode !== undefined) return false;
    this.#spawned.resize(cols, rows);
    return true;
  }

  /**
   * Kills what is left of the child's tree and waits until its streams have ended, or at most
   * `drainTimeoutMs` (a descendant in its own session may hold the pipe forever). Idempotent.
   */
  async shutdown(drainTimeoutMs: number): Promise<void> {
    this.#inputWait?.[Symbol.dispose]();
    this.terminate();
    const spawned = this.#spawned;
    if (spawned === undefined) return;
    const settled = spawned.close().then(() => this.#done);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut && this.#closed) {
      // Its output ended long ago: only the child's cleanup (its cgroup, on a busy host) is slow.
      this.#init.logger.debug('process cleanup still running at the shutdown deadline', {
        processId: this.processId,
      });
    } else if (timedOut) {
      this.#init.logger.warn('process streams still open after shutdown', { processId: this.processId });
    }
    await this.#network?.close();
  }

  /** The `process/list` row. */
  listEntry(): ProcessListEntry {
    const running = this.#spawned !== undefined && this.#exitCode === undefined;
    // Absent fields are left out rather than set to undefined (clean on both codecs).
    return {
      processId: this.processId,
      ...(running ? { pid: this.#spawned!.pid } : {}),
      argv: [...this.#init.argv],
      cwd: this.#init.cwd,
      tty: this.tty,
      state: this.state,
      ...(this.#exitCode === undefined ? {} : { exitCode: this.#exitCode }),
      ...(this.#spawned === undefined ? {} : { sandboxType: this.#sandboxType }),
      nextSeq: this.#events.nextSeq,
      startedAtMs: this.startedAtMs,
    };
  }

  async #pumpOutput(spawned: SpawnedProcess): Promise<void> {
    try {
      const flow = this.#init.flow;
      for await (const chunk of spawned.output()) {
        this.#recordOutput(chunk.stream, chunk.bytes);
        // Not taking the next chunk is the backpressure: the child blocks once its pipe is full.
        if (flow.paused) await flow.whenFlowing();
      }
    } catch (error) {
      this.#init.logger.warn('process output failed', { processId: this.processId, error });
    } finally {
      this.#streamsOpen = false;
      this.#maybeClose();
    }
  }

  async #watchExit(
    spawned: SpawnedProcess,
    outputDone: Promise<void>,
    limits: SpawnedLimits | undefined,
  ): Promise<void> {
    const status = await spawned.exited;
    await awaitOutputBeforeExit(this.#init.flow, outputDone, this.#init.exitGraceMs);
    // A resource limit the command hit is said where the model and the user read: a last line
    // of its output, before the exit (only then: ordinary results stay the original's).
    const hit = await limits?.describeHit().catch(() => undefined);
    if (hit !== undefined) {
      this.#recordOutput(spawned.tty ? 'pty' : 'stderr', new TextEncoder().encode(`\nexecd: ${hit}\n`));
    }
    this.#recordExit(status.exitCode);
  }

  #recordOutput(stream: OutputStream, chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    const seq = this.#events.recordOutput(stream, chunk);
    this.#inputWait?.activity();
    this.#init.emit({ method: 'process/output', params: { processId: this.processId, seq, stream, chunk } });
    this.changed.notify();
  }

  #recordExit(exitCode: number): void {
    this.#inputWait?.[Symbol.dispose]();
    this.#exitCode = exitCode;
    this.#sandboxDenied = exitSandboxDenied({
      processId: this.processId,
      exitCode,
      sandboxType: this.#sandboxType,
      output: this.#events.output,
      networkDenials: () => this.networkDenials(),
      isSandboxDenied: this.#init.isSandboxDenied,
      logger: this.#init.logger,
    });
    const sandboxDenied = this.#sandboxDenied;
    const seq = this.#events.recordExit(exitCode, sandboxDenied);
    this.#init.logger.debug('process exited', { processId: this.processId, seq, exitCode, sandboxDenied });
    this.#init.emit({
      method: 'process/exited',
      params: { processId: this.processId, seq, exitCode, sandboxDenied },
    });
    this.changed.notify();
    this.#maybeClose();
  }

  /**
   * Follows the terminal's input waits (tty children on Linux): the listener gets the seq of the
   * last event before each wait. Undefined for processes that cannot report it.
   */
  onWaitingForInput(listener: (afterSeq: number) => void): Disposable | undefined {
    if (!this.tty || process.platform !== 'linux' || this.#closed) return undefined;
    this.#waitingListeners.add(listener);
    return { [Symbol.dispose]: () => this.#waitingListeners.delete(listener) };
  }

  #reportWaiting(): void {
    // Held-back output (a congested client) may still be in the terminal: no report then.
    if (this.#exitCode !== undefined || this.#init.flow.paused) return;
    const seq = this.#events.nextSeq - 1;
    this.#init.logger.trace('process waits for input', { processId: this.processId, seq });
    this.#init.emit({ method: 'process/waitingForInput', params: { processId: this.processId, seq } });
    for (const listener of [...this.#waitingListeners]) listener(seq);
    this.changed.notify();
  }

  #maybeClose(): void {
    if (this.#closed || this.#exitCode === undefined || this.#streamsOpen) return;
    this.#closed = true;
    const seq = this.#events.recordClosed();
    this.#init.logger.debug('process closed', { processId: this.processId, seq });
    this.#init.emit({ method: 'process/closed', params: { processId: this.processId, seq } });
    this.changed.notify();
    this.#init.onClosed(this);
    // Spec §3.1: the process's proxy lives until the close (exit and every stream ended).
    this.#network?.close().catch((error: unknown) => {
      this.#init.logger.warn('closing the process network failed', { processId: this.processId, error });
    });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
