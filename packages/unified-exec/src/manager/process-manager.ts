import { randomUUID } from 'node:crypto';
import { Emitter, type Logger, NOOP_LOGGER } from '@execd/protocol';
import { EARLY_EXIT_GRACE_PERIOD_MS, INTERRUPT_INPUT, TTY_WRITE_SETTLE_MS } from '../constants.ts';
import { UnifiedExecError } from '../errors.ts';
import type { ExecPolicyManager } from '../exec-policy/exec-policy-manager.ts';
import { abortReason } from '../internal/abortable.ts';
import { sleep } from '../internal/timers.ts';
import type { Approver } from '../orchestrator/approval.ts';
import { ToolOrchestrator } from '../orchestrator/tool-orchestrator.ts';
import type { OutputPresentation } from '../output/present-output.ts';
import { decodeUtf8Lossy, encodeUtf8 } from '../output/utf8.ts';
import { collectOutputUntilDeadline } from '../process/collect-output.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';
import { openSession } from '../runtime/open-session.ts';
import type { ApprovalPolicy } from '../tools/exec-command-policy.ts';
import { clampExecYieldTime, clampWriteStdinYieldTime } from '../tools/yield-time.ts';
import type { UnifiedExecEvent } from './events.ts';
import { OutputStreaming } from './output-streaming.ts';
import { type ProcessStatus, ProcessTable } from './process-table.ts';
import type { ExecCommandRequest, ProcessListing, WriteStdinRequest } from './requests.ts';
import { buildToolOutput, type ExecCommandToolOutput, presentToolOutput } from './tool-output.ts';

/** Options of a UnifiedExecProcessManager. */
export interface UnifiedExecProcessManagerOptions {
  /** When commands need approval (default `on-request`). */
  readonly approvalPolicy?: ApprovalPolicy | undefined;
  /** Answers approval requests (default: deny everything). */
  readonly approver?: Approver | undefined;
  /**
   * Prefix rules and command heuristics (default: no rules). `ExecPolicyManager.load(codexHome)`
   * reads `<codexHome>/rules/*.rules`, where "always allow" answers are also written.
   */
  readonly execPolicy?: ExecPolicyManager | undefined;
  /** `deterministic` ids (1000, 1001, …) for tests; `random` in [1000, 100000) by default. */
  readonly processIds?: 'random' | 'deterministic' | undefined;
  /** Exported as `CODEX_THREAD_ID`; also scopes shell snapshots (default: a fresh UUID). */
  readonly threadId?: string | undefined;
  /** Exported as `CODEX_SESSION_ID` when given. */
  readonly sessionId?: string | undefined;
  /** Exported as `CODEX_PERMISSION_PROFILE`: the active permission profile's name, when named. */
  readonly permissionProfileName?: string | undefined;
  /** Exports `CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1` (default true, as Codex 0.169.0). */
  readonly applyPatchPreserveLineEndings?: boolean | undefined;
  /** Longest wait of an empty write_stdin poll (default 300,000 ms, at least 5,000). */
  readonly maxWriteStdinYieldTimeMs?: number | undefined;
  /** Early-exit grace after spawn (default 150 ms; tests on slow machines may raise it). */
  readonly earlyExitGraceMs?: number | undefined;
  /**
   * execd addition (default true): exec_command / write_stdin on a tty session return as soon as
   * its foreground program waits for terminal input and the output has settled, instead of at
   * the yield deadline. Needs Linux /proc (locally, or an execd exec-server); the result text is
   * the original's, only sooner.
   */
  readonly returnOnInputWait?: boolean | undefined;
  /**
   * execd addition (default: none, the original's text): render redrawing tty output as the
   * terminal shows it, and mask secrets, before output reaches a tool result. `uexec` and the MCP
   * server turn both on.
   */
  readonly presentation?: OutputPresentation | undefined;
  readonly logger?: Logger | undefined;
}

/**
 * Owns the processes behind `exec_command` / `write_stdin` (the original's
 * `UnifiedExecProcessManager`, spec §4.3-§4.5): reserves ids, runs launches through the
 * orchestrator, keeps live processes in a store of at most 64 (pruning the least recently used),
 * collects output per call, serialises calls per process and reports exits. Failures are thrown
 * as `UnifiedExecError`s (the handlers turn them into text for the model).
 */
export class UnifiedExecProcessManager implements AsyncDisposable {
  readonly #table: ProcessTable;
  readonly #orchestrator: ToolOrchestrator;
  readonly #approver: Approver | undefined;
  readonly #events: Emitter<UnifiedExecEvent>;
  readonly #logger: Logger;
  readonly #threadId: string;
  readonly #sessionId: string | undefined;
  readonly #runtimeEnv: Pick<
    UnifiedExecProcessManagerOptions,
    'permissionProfileName' | 'applyPatchPreserveLineEndings'
  >;
  readonly #maxEmptyPollMs: number | undefined;
  readonly #earlyExitGraceMs: number;
  readonly #returnOnInputWait: boolean;
  readonly #presentation: OutputPresentation | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: UnifiedExecProcessManagerOptions = {}) {
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#table = new ProcessTable({ processIds: options.processIds, logger: this.#logger });
    this.#approver = options.approver;
    this.#orchestrator = new ToolOrchestrator({
      approvalPolicy: options.approvalPolicy,
      approver: options.approver,
      execPolicy: options.execPolicy,
      logger: this.#logger,
    });
    this.#events = new Emitter(this.#logger);
    this.#threadId = options.threadId ?? randomUUID();
    this.#sessionId = options.sessionId;
    this.#runtimeEnv = {
      permissionProfileName: options.permissionProfileName,
      applyPatchPreserveLineEndings: options.applyPatchPreserveLineEndings,
    };
    this.#maxEmptyPollMs = options.maxWriteStdinYieldTimeMs;
    this.#earlyExitGraceMs = options.earlyExitGraceMs ?? EARLY_EXIT_GRACE_PERIOD_MS;
    this.#returnOnInputWait = options.returnOnInputWait ?? true;
    this.#presentation = options.presentation;
  }

  /** The approval policy in force. */
  get approvalPolicy(): ApprovalPolicy {
    return this.#orchestrator.approvalPolicy;
  }

  /** The session's exec policy (rules plus approved prefixes). */
  get execPolicy(): ExecPolicyManager {
    return this.#orchestrator.execPolicy;
  }

  /** The host's Approver (undefined: every request is denied); apply_patch asks it too. */
  get approver(): Approver | undefined {
    return this.#approver;
  }

  /** `CODEX_THREAD_ID` of this manager's commands. */
  get threadId(): string {
    return this.#threadId;
  }

  /** Stored processes (live, or exited and not yet reported). */
  get size(): number {
    return this.#table.size;
  }

  /** Subscribes to begin / output / interaction / end events. */
  onEvent(listener: (event: UnifiedExecEvent) => void): Disposable {
    return this.#events.event(listener);
  }

  /** Reserves a fresh process id for an exec_command about to start. */
  allocateProcessId(): number {
    return this.#table.allocate();
  }

  /** Releases an id reserved for a command that will not start (and forgets its process). */
  releaseProcessId(processId: number): void {
    this.#table.release(processId);
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
        permissionProfileName: this.#runtimeEnv.permissionProfileName,
        applyPatchPreserveLineEndings: this.#runtimeEnv.applyPatchPreserveLineEndings,
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
      if (startedAlive) this.#table.store(process, request, environment, streaming);
      const collected = await collectOutputUntilDeadline(process, {
        deadline: start + clampExecYieldTime(request.yieldTimeMs),
        // Any report since the start: an interactive program returns at its first prompt.
        stopOnInputWaitAfter: this.#returnOnInputWait && request.tty ? 0 : undefined,
        cancelSignal: request.cancelSignal,
      });
      const wallTimeSeconds = (performance.now() - start) / 1000;
      const text = decodeUtf8Lossy(collected.toBytes());
      const failure = process.failureMessage;
      if (failure !== undefined) {
        if (!startedAlive) streaming.emitEnd(undefined, failure);
        this.releaseProcessId(processId);
        this.#table.track(process.close());
        throw UnifiedExecError.processFailed(failure);
      }
      let responseProcessId: number | undefined;
      let exitCode: number | undefined;
      if (startedAlive) {
        const status = this.#table.refresh(processId);
        if (status.kind === 'unknown') throw UnifiedExecError.unknownProcessId(processId);
        if (status.kind === 'alive') responseProcessId = processId;
        else exitCode = status.exitCode;
      } else {
        exitCode = process.exitCode;
        streaming.emitEnd(exitCode, undefined);
        this.releaseProcessId(processId);
        this.#table.track(process.close());
      }
      if (responseProcessId === undefined) {
        const denial = process.sandboxDenial(text);
        if (denial !== undefined) throw denial;
      }
      // Cancelled: a running process stays stored (a later write_stdin can still reach it).
      if (request.cancelSignal?.aborted) throw abortReason(request.cancelSignal);
      const output = buildToolOutput(request.callId, collected, wallTimeSeconds, {
        processId: responseProcessId,
        exitCode,
        maxOutputTokens: request.maxOutputTokens,
        command: request.command,
        hookCommand: request.hookCommand,
      });
      return await presentToolOutput(output, { tty: request.tty, presentation: this.#presentation });
    } finally {
      release();
    }
  }

  /** Runs one write_stdin (spec §4.4); an empty `input` polls. */
  async writeStdin(request: WriteStdinRequest): Promise<ExecCommandToolOutput> {
    const { processId } = request;
    const entry = this.#table.get(processId);
    if (entry === undefined) throw UnifiedExecError.unknownProcessId(processId);
    const { process } = entry;
    this.#logger.trace('unified-exec: write_stdin', { processId, bytes: request.input.length });
    const release = await process.interactionLock.lock();
    try {
      this.#logger.trace('unified-exec: write_stdin holds the interaction lock', { processId });
      entry.lastUsed = this.#table.touch();
      let statusAfterWrite: ProcessStatus | undefined;
      // Only a wait reported after this call's write counts (an idle prompt does not end a poll).
      let inputWaitReports = process.inputWaitReports;
      if (request.input.length > 0) {
        if (!entry.tty) {
          // A pipe child's stdin is /dev/null: only Ctrl-C means something (an interrupt).
          if (request.input !== INTERRUPT_INPUT) throw UnifiedExecError.stdinClosed();
          await process.interrupt();
        } else {
          try {
            await process.write(encodeUtf8(request.input));
            inputWaitReports = process.inputWaitReports;
            // Let the terminal echo and the program react before collecting (unless the wait
            // ends on the program's own next read: it has reacted by then).
            if (!(this.#returnOnInputWait && process.reportsInputWait)) await sleep(TTY_WRITE_SETTLE_MS);
          } catch (error) {
            const status = this.#table.refresh(processId);
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
      const collected = await collectOutputUntilDeadline(process, {
        deadline: start + yieldMs,
        stopOnInputWaitAfter: this.#returnOnInputWait && entry.tty ? inputWaitReports : undefined,
        cancelSignal: request.cancelSignal,
      });
      if (request.cancelSignal?.aborted) throw abortReason(request.cancelSignal);
      const wallTimeSeconds = (performance.now() - start) / 1000;
      this.#logger.trace('unified-exec: write_stdin collected', { processId, bytes: collected.totalBytes });
      const failure = process.failureMessage;
      if (failure !== undefined) {
        this.releaseProcessId(processId);
        throw UnifiedExecError.processFailed(failure);
      }
      const status = statusAfterWrite ?? this.#table.refresh(processId);
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
      const output = buildToolOutput(entry.callId, collected, wallTimeSeconds, {
        processId: responseProcessId,
        exitCode,
        maxOutputTokens: request.maxOutputTokens,
        command: entry.command,
        hookCommand: entry.hookCommand,
      });
      return await presentToolOutput(output, { tty: entry.tty, presentation: this.#presentation });
    } finally {
      release();
    }
  }

  /** The stored processes, sorted by id. */
  listProcesses(): ProcessListing[] {
    return this.#table.list();
  }

  /** Kills one stored process and waits for it; false when no such process is stored. */
  terminateProcess(processId: number): Promise<boolean> {
    return this.#table.terminate(processId);
  }

  /** Kills every stored process (and forgets every reservation), waiting until each is reaped. */
  terminateAll(): Promise<void> {
    return this.#table.terminateAll();
  }

  /** Terminates everything and waits for background work (exit watchers). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.terminateAll();
      await this.#table.settle();
      this.#events.clear();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
