import { randomUUID } from 'node:crypto';
import { Emitter, type Logger, NOOP_LOGGER } from '@execd/protocol';
import { EARLY_EXIT_GRACE_PERIOD_MS, INTERRUPT_INPUT, TTY_WRITE_SETTLE_MS } from '../constants.ts';
import type { Environment } from '../environment/environment.ts';
import { UnifiedExecError } from '../errors.ts';
import { sleep } from '../internal/timers.ts';
import type { Approver } from '../orchestrator/approval.ts';
import { ToolOrchestrator } from '../orchestrator/tool-orchestrator.ts';
import { decodeUtf8Lossy, encodeUtf8 } from '../output/utf8.ts';
import { collectOutputUntilDeadline } from '../process/collect-output.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import { openSession } from '../runtime/open-session.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { clampExecYieldTime, clampWriteStdinYieldTime } from '../tools/yield-time.ts';
import type { UnifiedExecEvent } from './events.ts';
import { OutputStreaming } from './output-streaming.ts';
import { type ProcessEntry, ProcessStore } from './process-store.ts';
import type { ExecCommandRequest, ProcessListing, WriteStdinRequest } from './requests.ts';
import { buildToolOutput, type ExecCommandToolOutput } from './tool-output.ts';

/** Options of a UnifiedExecProcessManager. */
export interface UnifiedExecProcessManagerOptions {
  /** When commands need approval (default `on-request`). */
  readonly approvalPolicy?: ApprovalPolicy | undefined;
  /** Answers approval requests (default: deny everything). */
  readonly approver?: Approver | undefined;
  /** `deterministic` ids (1000, 1001, …) for tests; `random` in [1000, 100000) by default. */
  readonly processIds?: 'random' | 'deterministic' | undefined;
  /** Exported as `CODEX_THREAD_ID`; also scopes shell snapshots (default: a fresh UUID). */
  readonly threadId?: string | undefined;
  /** Exported as `CODEX_SESSION_ID` when given. */
  readonly sessionId?: string | undefined;
  /** Longest wait of an empty write_stdin poll (default 300,000 ms, at least 5,000). */
  readonly maxWriteStdinYieldTimeMs?: number | undefined;
  /** Early-exit grace after spawn (default 150 ms; tests on slow machines may raise it). */
  readonly earlyExitGraceMs?: number | undefined;
  readonly logger?: Logger | undefined;
}

type ProcessStatus =
  | { readonly kind: 'alive' }
  | { readonly kind: 'exited'; readonly exitCode: number | undefined }
  | { readonly kind: 'unknown' };

/**
 * Owns the processes behind `exec_command` / `write_stdin` (the original's
 * `UnifiedExecProcessManager`, spec §4.3-§4.5): reserves ids, runs launches through the
 * orchestrator, keeps live processes in a store of at most 64 (pruning the least recently used),
 * collects output per call, serialises calls per process and reports exits. Failures are thrown
 * as `UnifiedExecError`s (the handlers turn them into text for the model).
 */
export class UnifiedExecProcessManager implements AsyncDisposable {
  readonly #store: ProcessStore;
  readonly #orchestrator: ToolOrchestrator;
  readonly #events: Emitter<UnifiedExecEvent>;
  readonly #logger: Logger;
  readonly #threadId: string;
  readonly #sessionId: string | undefined;
  readonly #maxEmptyPollMs: number | undefined;
  readonly #earlyExitGraceMs: number;
  readonly #background = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  constructor(options: UnifiedExecProcessManagerOptions = {}) {
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#store = new ProcessStore({ processIds: options.processIds });
    this.#orchestrator = new ToolOrchestrator({
      approvalPolicy: options.approvalPolicy,
      approver: options.approver,
      logger: this.#logger,
    });
    this.#events = new Emitter(this.#logger);
    this.#threadId = options.threadId ?? randomUUID();
    this.#sessionId = options.sessionId;
    this.#maxEmptyPollMs = options.maxWriteStdinYieldTimeMs;
    this.#earlyExitGraceMs = options.earlyExitGraceMs ?? EARLY_EXIT_GRACE_PERIOD_MS;
  }

  /** The approval policy in force. */
  get approvalPolicy(): ApprovalPolicy {
    return this.#orchestrator.approvalPolicy;
  }

  /** `CODEX_THREAD_ID` of this manager's commands. */
  get threadId(): string {
    return this.#threadId;
  }

  /** Stored processes (live, or exited and not yet reported). */
  get size(): number {
    return this.#store.size;
  }

  /** Subscribes to begin / output / interaction / end events. */
  onEvent(listener: (event: UnifiedExecEvent) => void): Disposable {
    return this.#events.event(listener);
  }

  /** Reserves a fresh process id for an exec_command about to start. */
  allocateProcessId(): number {
    return this.#store.allocate();
  }

  /** Releases an id reserved for a command that will not start (and forgets its process). */
  releaseProcessId(processId: number): void {
    const entry = this.#store.remove(processId);
    if (entry !== undefined) this.#track(entry.process.close());
  }

  /** Runs one exec_command (spec §4.3). The id must come from {@link allocateProcessId}. */
  async execCommand(request: ExecCommandRequest): Promise<ExecCommandToolOutput> {
    const { processId, environment } = request;
    let process: UnifiedExecProcess;
    try {
      if (this.#closing !== undefined) throw UnifiedExecError.createProcess('the process manager is closed');
      process = await openSession(this.#orchestrator, request, {
        threadId: this.#threadId,
        sessionId: this.#sessionId,
        earlyExitGraceMs: this.#earlyExitGraceMs,
        logger: this.#logger,
      });
    } catch (error) {
      this.releaseProcessId(processId);
      throw error;
    }
    if (this.#closing !== undefined) {
      this.releaseProcessId(processId);
      await process.close();
      throw UnifiedExecError.createProcess('the process manager is closed');
    }
    const streaming = new OutputStreaming(process, {
      callId: request.callId,
      processId,
      command: request.command,
      cwd: request.cwd,
      startedAt: performance.now(),
      emit: (event) => this.#events.fire(event),
    });
    this.#events.fire({
      type: 'begin',
      callId: request.callId,
      processId,
      command: request.command,
      cwd: request.cwd,
    });
    const start = performance.now();
    const startedAlive = !process.hasExited;
    // The first call holds the interaction lock, so the exit watcher reports after this result.
    const release = await process.interactionLock.lock();
    try {
      if (startedAlive) this.#storeProcess(process, request, environment, streaming);
      const collected = await collectOutputUntilDeadline(process, {
        deadline: start + clampExecYieldTime(request.yieldTimeMs),
      });
      const wallTimeSeconds = (performance.now() - start) / 1000;
      const text = decodeUtf8Lossy(collected.toBytes());
      const failure = process.failureMessage;
      if (failure !== undefined) {
        if (!startedAlive) streaming.emitEnd(undefined, failure);
        this.releaseProcessId(processId);
        this.#track(process.close());
        throw UnifiedExecError.processFailed(failure);
      }
      let responseProcessId: number | undefined;
      let exitCode: number | undefined;
      if (startedAlive) {
        const status = this.#refresh(processId);
        if (status.kind === 'unknown') throw UnifiedExecError.unknownProcessId(processId);
        if (status.kind === 'alive') responseProcessId = processId;
        else exitCode = status.exitCode;
      } else {
        exitCode = process.exitCode;
        streaming.emitEnd(exitCode, undefined);
        this.releaseProcessId(processId);
        this.#track(process.close());
      }
      if (responseProcessId === undefined) {
        const denial = process.sandboxDenial(text);
        if (denial !== undefined) throw denial;
      }
      return buildToolOutput(request.callId, collected, wallTimeSeconds, {
        processId: responseProcessId,
        exitCode,
        maxOutputTokens: request.maxOutputTokens,
        command: request.command,
      });
    } finally {
      release();
    }
  }

  #storeProcess(
    process: UnifiedExecProcess,
    request: ExecCommandRequest,
    environment: Environment,
    streaming: OutputStreaming,
  ): void {
    const entry: ProcessEntry = {
      process,
      callId: request.callId,
      processId: request.processId,
      command: request.command,
      hookCommand: request.hookCommand,
      cwd: request.cwd,
      environmentId: environment.id,
      tty: request.tty,
      lastUsed: this.#store.touch(),
    };
    const pruned = this.#store.insert(entry);
    if (pruned !== undefined) {
      this.#logger.debug('unified-exec: pruned a process', { processId: pruned.processId });
      pruned.process.terminate();
      this.#track(pruned.process.close());
    }
    // The exit watcher: reports the end once the process exited and its output drained.
    this.#track(
      (async () => {
        await streaming.finishAfterExit(process);
        const release = await process.interactionLock.lock();
        try {
          streaming.emitEnd(process.exitCode, process.failureMessage);
        } finally {
          release();
        }
      })(),
    );
  }

  /** Runs one write_stdin (spec §4.4); an empty `input` polls. */
  async writeStdin(request: WriteStdinRequest): Promise<ExecCommandToolOutput> {
    const { processId } = request;
    const entry = this.#store.get(processId);
    if (entry === undefined) throw UnifiedExecError.unknownProcessId(processId);
    const { process } = entry;
    this.#logger.trace('unified-exec: write_stdin', { processId, bytes: request.input.length });
    const release = await process.interactionLock.lock();
    try {
      this.#logger.trace('unified-exec: write_stdin holds the interaction lock', { processId });
      entry.lastUsed = this.#store.touch();
      let statusAfterWrite: ProcessStatus | undefined;
      if (request.input.length > 0) {
        if (!entry.tty) {
          // A pipe child's stdin is /dev/null: only Ctrl-C means something (an interrupt).
          if (request.input !== INTERRUPT_INPUT) throw UnifiedExecError.stdinClosed();
          await process.interrupt();
        } else {
          try {
            await process.write(encodeUtf8(request.input));
            // Let the terminal echo and the program react before collecting.
            await sleep(TTY_WRITE_SETTLE_MS);
          } catch (error) {
            const status = this.#refresh(processId);
            if (status.kind === 'exited') statusAfterWrite = status;
            else if (UnifiedExecError.isUnifiedExecError(error) && error.kind === 'processFailed') {
              process.terminate();
              this.releaseProcessId(processId);
              throw error;
            } else throw error;
          }
        }
      }
      const yieldMs = clampWriteStdinYieldTime(request.yieldTimeMs, request.input, this.#maxEmptyPollMs);
      this.#logger.trace('unified-exec: write_stdin collects', { processId, yieldMs });
      const start = performance.now();
      const collected = await collectOutputUntilDeadline(process, { deadline: start + yieldMs });
      const wallTimeSeconds = (performance.now() - start) / 1000;
      this.#logger.trace('unified-exec: write_stdin collected', { processId, bytes: collected.totalBytes });
      const failure = process.failureMessage;
      if (failure !== undefined) {
        this.releaseProcessId(processId);
        throw UnifiedExecError.processFailed(failure);
      }
      const status = statusAfterWrite ?? this.#refresh(processId);
      let responseProcessId: number | undefined;
      let exitCode: number | undefined;
      if (status.kind === 'alive') responseProcessId = processId;
      else if (status.kind === 'exited') exitCode = status.exitCode;
      else if (process.hasExited) exitCode = process.exitCode;
      else throw UnifiedExecError.unknownProcessId(processId);
      if (request.input.length > 0 || status.kind === 'alive') {
        this.#events.fire({
          type: 'terminalInteraction',
          callId: entry.callId,
          processId,
          stdin: request.input,
        });
      }
      return buildToolOutput(entry.callId, collected, wallTimeSeconds, {
        processId: responseProcessId,
        exitCode,
        maxOutputTokens: request.maxOutputTokens,
        command: entry.command,
      });
    } finally {
      release();
    }
  }

  /** Alive → stays; exited → removed (id released, handles closed); missing → unknown. */
  #refresh(processId: number): ProcessStatus {
    const entry = this.#store.get(processId);
    if (entry === undefined) return { kind: 'unknown' };
    if (!entry.process.hasExited) return { kind: 'alive' };
    this.#store.remove(processId);
    this.#track(entry.process.close());
    return { kind: 'exited', exitCode: entry.process.exitCode };
  }

  /** The stored processes, sorted by id. */
  listProcesses(): ProcessListing[] {
    return this.#store.entries().map((entry) => ({
      itemId: entry.callId,
      processId: entry.processId,
      command: entry.hookCommand,
      cwd: entry.cwd,
      environmentId: entry.environmentId,
      tty: entry.tty,
      running: !entry.process.hasExited,
    }));
  }

  /** Kills one stored process and waits for it; false when no such process is stored. */
  async terminateProcess(processId: number): Promise<boolean> {
    const entry = this.#store.get(processId);
    if (entry === undefined) return false;
    if (!(await entry.process.terminateConfirmed())) return false;
    if (this.#store.get(processId) === entry) this.#store.remove(processId);
    await entry.process.close();
    return true;
  }

  /** Kills every stored process (and forgets every reservation), waiting until each is reaped. */
  async terminateAll(): Promise<void> {
    const entries = this.#store.drain();
    await Promise.allSettled(entries.map((entry) => entry.process.close()));
  }

  /** Terminates everything and waits for background work (exit watchers). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.terminateAll();
      while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
      this.#events.clear();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => {
      this.#logger.debug('unified-exec: background task failed', { error });
    });
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }
}
