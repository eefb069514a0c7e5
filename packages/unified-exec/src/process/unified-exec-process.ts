import { ChangeSignal, Emitter, type Logger, type SandboxType } from '@execd/protocol';
import { isLikelySandboxDenied } from '@execd/sandboxing';
import { UNIFIED_EXEC_OUTPUT_MAX_BYTES, UNIFIED_EXEC_OUTPUT_MAX_TOKENS } from '../constants.ts';
import { UnifiedExecError } from '../errors.ts';
import { AsyncMutex } from '../internal/async-mutex.ts';
import { settlesWithin } from '../internal/timers.ts';
import { HeadTailBuffer } from '../output/head-tail-buffer.ts';
import { formattedTruncateText } from '../output/truncation.ts';
import { decodeUtf8Lossy } from '../output/utf8.ts';
import type { ProcessDriver, ProcessSink } from './process-driver.ts';

/**
 * After an early exit, how long the sandbox-denial check waits for the rest of the output (the
 * original waits for one output notification, 20 ms): a denial is judged on what was printed,
 * and a drained child usually closes its streams within a few milliseconds.
 */
export const EARLY_EXIT_OUTPUT_WAIT_MS = 250;

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Options of {@link UnifiedExecProcess.start}. */
export interface UnifiedExecProcessOptions {
  /** PTY child (stdin writable) or pipes (stdin closed). */
  readonly tty: boolean;
  /** A child that exits within this window is reported exited at once (default 150 ms). */
  readonly earlyExitGraceMs: number;
  readonly logger?: Logger | undefined;
}

/**
 * One unified-exec process, whichever backend runs it (spec §4.8): output is collected into a
 * 1 MiB head/tail buffer that callers drain, exit/close/failure are tracked, and one interaction
 * lock serialises the calls that read or write this terminal.
 */
export class UnifiedExecProcess {
  /** PTY child (writes allowed) or pipe child (only Ctrl-C, as an interrupt). */
  readonly tty: boolean;
  /** Held by every write_stdin/poll of this process; different processes run in parallel. */
  readonly interactionLock: AsyncMutex = new AsyncMutex();
  readonly #driver: ProcessDriver;
  readonly #logger: Logger | undefined;
  readonly #buffer = new HeadTailBuffer();
  readonly #changed = new ChangeSignal();
  readonly #outputEmitter: Emitter<Uint8Array>;
  // Output seen before the first onOutput listener, replayed to it (bounded like the buffer).
  #earlyChunks: Uint8Array[] | undefined = [];
  #earlyBytes = 0;
  readonly #exitedSignal = deferred();
  readonly #closedSignal = deferred();
  #exited = false;
  #exitCode: number | undefined;
  #outputClosed = false;
  #failure: string | undefined;
  #executorSandboxDenied = false;
  #closing: Promise<void> | undefined;
  #waitingForInput = false;
  #inputWaitReports = 0;

  private constructor(driver: ProcessDriver, options: UnifiedExecProcessOptions) {
    this.#driver = driver;
    this.tty = options.tty;
    this.#logger = options.logger;
    this.#outputEmitter = new Emitter(options.logger);
  }

  /**
   * Wraps a started driver: attaches the output reader FIRST, then waits up to the early-exit
   * grace for an exit (so output of a very short command is never lost). A sandboxed child that
   * exited early and looks refused throws a `sandboxDenied` UnifiedExecError (the process is
   * closed), which lets the orchestrator retry.
   */
  static async start(driver: ProcessDriver, options: UnifiedExecProcessOptions): Promise<UnifiedExecProcess> {
    const process = new UnifiedExecProcess(driver, options);
    driver.attach(process.#sink());
    if (!process.#exited) await settlesWithin(process.#exitedSignal.promise, options.earlyExitGraceMs);
    if (process.#exited) {
      await settlesWithin(process.#closedSignal.promise, EARLY_EXIT_OUTPUT_WAIT_MS);
      const denial = process.sandboxDenial(process.snapshotText());
      if (denial !== undefined) {
        await process.close();
        throw denial;
      }
    }
    return process;
  }

  #sink(): ProcessSink {
    return {
      output: (bytes) => {
        if (bytes.length === 0) return;
        this.#waitingForInput = false;
        this.#buffer.pushChunk(bytes);
        if (this.#earlyChunks !== undefined && this.#earlyBytes < UNIFIED_EXEC_OUTPUT_MAX_BYTES) {
          this.#earlyChunks.push(bytes);
          this.#earlyBytes += bytes.length;
        }
        this.#outputEmitter.fire(bytes);
        this.#changed.notify();
      },
      exited: (exitCode, sandboxDenied) => {
        if (sandboxDenied) this.#executorSandboxDenied = true;
        // A terminate marks the process exited first; its real code, when it comes, still counts.
        this.#exitCode ??= exitCode;
        this.#logger?.debug('unified-exec: process exited', { exitCode });
        this.#markExited();
      },
      closed: () => this.#markClosed(),
      waitingForInput: () => {
        if (this.#exited) return;
        this.#waitingForInput = true;
        this.#inputWaitReports += 1;
        this.#changed.notify();
      },
      failed: (message) => {
        this.#failure ??= message;
        this.#logger?.debug('unified-exec: process failed', { message });
        this.#markExited();
        this.#markClosed();
      },
    };
  }

  #markExited(): void {
    if (this.#exited) return;
    this.#exited = true;
    this.#exitedSignal.resolve();
    this.#changed.notify();
  }

  #markClosed(): void {
    if (this.#outputClosed) return;
    this.#outputClosed = true;
    this.#closedSignal.resolve();
    this.#changed.notify();
  }

  /** The sandbox the child runs under. */
  get sandboxType(): SandboxType {
    return this.#driver.sandboxType;
  }

  /** The exec-server process id (`{id}` or `{id}-{uuid}`) for exec-server backed processes. */
  get backendProcessId(): string | undefined {
    return this.#driver.backendProcessId;
  }

  /** True once the child exited, was terminated or was lost. */
  get hasExited(): boolean {
    return this.#exited;
  }

  /** The exit code once known. */
  get exitCode(): number | undefined {
    return this.#exitCode;
  }

  /** True when the backend tells when the terminal waits for input (tty children on Linux). */
  get reportsInputWait(): boolean {
    return this.#driver.reportsInputWait === true;
  }

  /** True from a "waits for input" report until the next output or write. */
  get waitingForInput(): boolean {
    return this.#waitingForInput;
  }

  /** How many "waits for input" reports arrived so far (a call compares it with its start). */
  get inputWaitReports(): number {
    return this.#inputWaitReports;
  }

  /** True once no more output can arrive. */
  get outputClosed(): boolean {
    return this.#outputClosed;
  }

  /** Why the backend lost the process, if it did. */
  get failureMessage(): string | undefined {
    return this.#failure;
  }

  /** Resolves when the child exits (or is lost). */
  get exited(): Promise<void> {
    return this.#exitedSignal.promise;
  }

  /** Resolves when its output is closed. */
  get closed(): Promise<void> {
    return this.#closedSignal.promise;
  }

  /** Moves everything buffered so far into `target` (omitted-byte counts included); false when empty. */
  drainInto(target: HeadTailBuffer): boolean {
    if (this.#buffer.totalBytes === 0) return false;
    target.pushBuffer(this.#buffer);
    this.#buffer.clear();
    return true;
  }

  /** Waits until output, exit, close or failure happens, or `timeoutMs` passes. */
  waitForChange(timeoutMs: number, cancelSignal?: AbortSignal): Promise<boolean> {
    return this.#changed.wait(timeoutMs, cancelSignal);
  }

  /** Subscribes to raw output chunks; the first listener also gets what arrived before it. */
  onOutput(listener: (bytes: Uint8Array) => void): Disposable {
    const subscription = this.#outputEmitter.event(listener);
    const early = this.#earlyChunks;
    this.#earlyChunks = undefined;
    for (const chunk of early ?? []) listener(chunk);
    return subscription;
  }

  /** The still-buffered (not yet drained) output as text. */
  snapshotText(): string {
    return decodeUtf8Lossy(this.#buffer.toBytes());
  }

  /**
   * The `sandboxDenied` error when this exited process most likely failed because the sandbox
   * refused it (judged on `text`, spec §5.5), else undefined.
   */
  sandboxDenial(text: string): UnifiedExecError | undefined {
    if (!this.#exited) return undefined;
    const sandboxType = this.sandboxType;
    if (sandboxType === 'none' && !this.#executorSandboxDenied) return undefined;
    const exitCode = this.#exitCode ?? -1;
    const denied =
      this.#executorSandboxDenied ||
      isLikelySandboxDenied(sandboxType, { exitCode, stdout: '', stderr: text, aggregated: text });
    if (!denied) return undefined;
    const snippet = formattedTruncateText(text, { kind: 'tokens', limit: UNIFIED_EXEC_OUTPUT_MAX_TOKENS });
    const message = snippet.length === 0 ? `Process exited with code ${exitCode}` : snippet;
    return UnifiedExecError.sandboxDenied(message, { exitCode, text });
  }

  /** Writes to stdin; a failure is a `writeToStdin` (or `processFailed`) UnifiedExecError. */
  write(bytes: Uint8Array): Promise<void> {
    this.#waitingForInput = false;
    return this.#driver.write(bytes);
  }

  /** SIGINT to the process group (Ctrl-C for pipe children). */
  interrupt(): Promise<void> {
    return this.#driver.interrupt();
  }

  /**
   * Kills the tree in the background (pruning, a failed write): collectors stop at once, the
   * process counts as exited.
   */
  terminate(): void {
    this.#markExited();
    this.#markClosed();
    void this.close();
  }

  /** Kills the tree and waits for the confirmation; true when it was confirmed. */
  async terminateConfirmed(): Promise<boolean> {
    let confirmed = false;
    try {
      confirmed = await this.#driver.terminate();
    } catch (error) {
      this.#logger?.debug('unified-exec: terminate failed', { error });
    }
    if (confirmed) this.#markExited();
    return confirmed;
  }

  /** Kills the tree if needed and releases every handle. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    try {
      await this.#driver.close();
    } finally {
      this.#markExited();
      this.#markClosed();
      this.#outputEmitter.clear();
      this.#earlyChunks = undefined;
      this.#changed.notify();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
