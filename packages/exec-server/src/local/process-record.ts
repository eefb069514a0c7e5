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
import {
  EventLog,
  type EventLogLimits,
  type NetworkDenial,
  type SequencedEvent,
} from '@execd/protocol/contract';
import { InputWaitWatcher, type SpawnedProcess } from '@execd/pty-utils';
import type { SpawnedLimits } from '@execd/sandboxing';
import type { ProcessNotification } from '../types.ts';
import type { OutputFlow } from './output-flow.ts';
import type { ProcessNetwork } from './process-network.ts';
import { RetainedOutput, type RetentionLimits } from './retained-output.ts';
import { sandboxedOutput } from './sandboxed-output.ts';
import type { LocalSpawnResult, SandboxDenialCheck } from './spawner.ts';
import { WriteIdSet } from './write-ids.ts';

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
  readonly #output: RetainedOutput;
  readonly #writeIds: WriteIdSet;
  readonly #pendingWrites = new Map<string, Promise<void>>();
  #spawned: SpawnedProcess | undefined;
  #network: ProcessNetwork | undefined;
  #sandboxType: SandboxType = 'none';
  #nextSeq = 1;
  #exitCode: number | undefined;
  #sandboxDenied = false;
  #streamsOpen = true;
  #closed = false;
  #terminationRequested = false;
  #done: Promise<void> = Promise.resolve();
  #exitEvent: SequencedEvent | undefined;
  #closedEvent: SequencedEvent | undefined;
  /** Tty children on Linux: tells when the terminal waits for input (undefined otherwise). */
  #inputWait: InputWaitWatcher | undefined;
  /** Listeners of in-process handles (`LocalExecProcess.onWaitingForInput`). */
  readonly #waitingListeners = new Set<(afterSeq: number) => void>();

  constructor(init: ProcessRecordInit) {
    this.#init = init;
    this.processId = init.processId;
    this.tty = init.tty;
    this.#output = new RetainedOutput(init.retention);
    this.history = new EventLog(init.history);
    this.#writeIds = new WriteIdSet(init.writeIdCapacity);
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
    const page = this.#output.page(afterSeq, maxBytes ?? Number.POSITIVE_INFINITY);
    const last = page.chunks.at(-1);
    const response: ReadResponse = {
      chunks: page.chunks,
      nextSeq: maxBytes !== undefined && last !== undefined ? last.seq + 1 : this.#nextSeq,
      exited: this.#exitCode !== undefined,
      exitCode: this.#exitCode ?? null,
      closed: this.#closed,
      failure: null,
      sandboxDenied: this.#sandboxDenied,
    };
    if (page.firstRetainedSeq !== undefined) response.firstRetainedSeq = page.firstRetainedSeq;
    // Only a page that reaches the last event can say what follows it.
    if (this.#inputWait?.waiting === true && response.nextSeq === this.#nextSeq) {
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
    if (!this.history.hasGapAfter(afterSeq))
      return { events: this.history.after(afterSeq), firstRetainedSeq: undefined };
    const events: SequencedEvent[] = this.#output
      .after(afterSeq)
      .map((chunk) => ({ type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk }));
    for (const event of [this.#exitEvent, this.#closedEvent]) {
      if (event !== undefined && event.seq > afterSeq) events.push(event);
    }
    events.sort((a, b) => a.seq - b.seq);
    const gap = afterSeq < this.#output.lastEvictedSeq;
    return { events, firstRetainedSeq: gap ? (this.#output.firstSeq ?? this.#nextSeq) : undefined };
  }

  /** `process/write` for this entry (the empty-id check and unknown ids are the table's). */
  async write(chunk: Uint8Array, writeId: string): Promise<WriteStatus> {
    const spawned = this.#spawned;
    if (spawned === undefined) return 'starting';
    if (!this.tty && !this.#init.pipeStdin) return 'stdinClosed';
    if (this.#writeIds.has(writeId)) return 'accepted';
    // A duplicate arriving while the first is still being written waits for it, never re-writes.
    const pending = this.#pendingWrites.get(writeId);
    if (pending !== undefined) {
      await pending;
      return 'accepted';
    }
    this.#inputWait?.activity();
    const writing = spawned.write(chunk).then(
      () => this.#writeIds.add(writeId),
      (error: unknown) => {
        throw new RpcError('internal', 'failed to write to process stdin', { cause: error });
      },
    );
    this.#pendingWrites.set(writeId, writing);
    try {
      await writing;
    } finally {
      this.#pendingWrites.delete(writeId);
    }
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
    if (timedOut)
      this.#init.logger.warn('process streams still open after shutdown', { processId: this.processId });
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
      nextSeq: this.#nextSeq,
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
    // Let output written just before the exit take its seq first; see EXIT_OUTPUT_GRACE_MS. While
    // the flow is paused the output before the exit is still in the pipe: the grace starts over
    // once it flows again, so a paused process's exit still follows its output.
    const flow = this.#init.flow;
    let outputEnded = false;
    void outputDone.then(() => {
      outputEnded = true;
    });
    do {
      await flow.whenFlowing();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        outputDone,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.#init.exitGraceMs);
        }),
      ]);
      clearTimeout(timer);
    } while (flow.paused && !outputEnded);
    // A resource limit the command hit is said where the model and the user read: a last line
    // of its output, before the exit (only then: ordinary results stay the original's).
    const hit = await limits?.describeHit().catch(() => undefined);
    if (hit !== undefined) {
      this.#recordOutput(spawned.tty ? 'pty' : 'stderr', new TextEncoder().encode(`\nexecd: ${hit}\n`));
    }
    this.#recordExit(status.exitCode);
  }

  #nextSeqValue(): number {
    const seq = this.#nextSeq;
    this.#nextSeq += 1;
    return seq;
  }

  #recordOutput(stream: OutputStream, chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    const seq = this.#nextSeqValue();
    this.#output.push(seq, stream, chunk);
    this.history.append({ type: 'output', seq, stream, chunk });
    this.#inputWait?.activity();
    this.#init.emit({ method: 'process/output', params: { processId: this.processId, seq, stream, chunk } });
    this.changed.notify();
  }

  #recordExit(exitCode: number): void {
    this.#inputWait?.[Symbol.dispose]();
    const seq = this.#nextSeqValue();
    this.#exitCode = exitCode;
    this.#sandboxDenied =
      (this.#sandboxType !== 'none' && this.#checkDenied(exitCode)) || this.#deniedByNetwork(exitCode);
    const sandboxDenied = this.#sandboxDenied;
    this.#init.logger.debug('process exited', { processId: this.processId, seq, exitCode, sandboxDenied });
    this.#exitEvent = { type: 'exited', seq, exitCode, sandboxDenied };
    this.history.append(this.#exitEvent);
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
    const seq = this.#nextSeq - 1;
    this.#init.logger.trace('process waits for input', { processId: this.processId, seq });
    this.#init.emit({ method: 'process/waitingForInput', params: { processId: this.processId, seq } });
    for (const listener of [...this.#waitingListeners]) listener(seq);
    this.changed.notify();
  }

  #maybeClose(): void {
    if (this.#closed || this.#exitCode === undefined || this.#streamsOpen) return;
    this.#closed = true;
    const seq = this.#nextSeqValue();
    this.#init.logger.debug('process closed', { processId: this.processId, seq });
    this.#closedEvent = { type: 'closed', seq };
    this.history.append(this.#closedEvent);
    this.#init.emit({ method: 'process/closed', params: { processId: this.processId, seq } });
    this.changed.notify();
    this.#init.onClosed(this);
    // Spec §3.1: the process's proxy lives until the close (exit and every stream ended).
    this.#network?.close().catch((error: unknown) => {
      this.#init.logger.warn('closing the process network failed', { processId: this.processId, error });
    });
  }

  /**
   * A `proxied` process that failed (non-zero exit) after its proxy refused a connection counts
   * as sandbox-denied: the failure most likely is the refused connection, and unified-exec can
   * offer to approve the host and retry.
   */
  #deniedByNetwork(exitCode: number): boolean {
    return exitCode !== 0 && this.networkDenials().length > 0;
  }

  #checkDenied(exitCode: number): boolean {
    try {
      return this.#init.isSandboxDenied(this.#sandboxType, sandboxedOutput(this.#output.after(0), exitCode));
    } catch (error) {
      this.#init.logger.warn('sandbox denial check failed', { processId: this.processId, error });
      return false;
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
