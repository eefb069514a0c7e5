import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { ExecError, type Logger } from '@execd/protocol';
import { DEFAULT_TERMINATE_GRACE_MS } from '../constants.ts';
import { signalProcessGroup, signalSessionOthers } from '../process-group.ts';
import type {
  ExitStatus,
  OutputChunk,
  OutputStreamName,
  SpawnedProcess,
  TerminateOptions,
} from '../types.ts';
import { OutputQueue } from './output-queue.ts';

/** One output stream of a child. */
export interface OutputSource {
  readonly name: OutputStreamName;
  readonly stream: Readable;
  /** Called at the stream's EOF: bytes still readable that the stream itself gave up on (PTY masters). */
  readonly readRemainder?: (() => readonly Uint8Array[]) | undefined;
}

/** The child's input side, as the spawner set it up. */
export interface StdinPort {
  write(bytes: Uint8Array): Promise<void>;
  /** Ends input (EOF). Idempotent. */
  close(): void;
  /** Releases the underlying handle without waiting for anything. Idempotent. */
  destroy(): void;
}

/** What a spawner hands to `ChildHandle`: the OS-level pieces of one started child. */
export interface ChildParts {
  readonly pid: number;
  readonly tty: boolean;
  readonly sources: readonly OutputSource[];
  readonly stdin: StdinPort;
  /** Resolves (never rejects) when the child has been reaped. */
  readonly exit: Promise<ExitStatus>;
  readonly resize: ((cols: number, rows: number) => void) | undefined;
  /** SIGHUP for a PTY (hang-up), SIGTERM for pipes. */
  readonly politeSignal: NodeJS.Signals;
  readonly drainTimeoutMs: number;
  readonly logger: Logger;
}

/**
 * The one `SpawnedProcess` implementation behind `spawnPty` and `spawnPipe`.
 *
 * ```
 *   running ──exit──> exited ──every stream ended──> closed
 *                        └──── drainTimeoutMs ─────────┘   (streams abandoned)
 * ```
 * Output is read under backpressure while the child runs; once it has exited, whatever is left is
 * read without pausing so a slow consumer cannot hold `closed` past the pipe's last bytes.
 */
export class ChildHandle implements SpawnedProcess {
  readonly pid: number;
  readonly tty: boolean;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<ExitStatus>;
  readonly #parts: ChildParts;
  readonly #queue: OutputQueue;
  readonly #log: Logger;
  #openStreams: number;
  #exitStatus: ExitStatus | undefined;
  #isClosed = false;
  #treeGone = false;
  #abandoned = false;
  #drainTimer: NodeJS.Timeout | undefined;
  #resolveClosed!: (status: ExitStatus) => void;
  #closing: Promise<void> | undefined;

  constructor(parts: ChildParts) {
    this.pid = parts.pid;
    this.tty = parts.tty;
    this.#parts = parts;
    this.#log = parts.logger;
    this.#queue = new OutputQueue({ onPressure: (paused) => this.#setPaused(paused) });
    this.#openStreams = parts.sources.length;
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    for (const source of parts.sources) this.#attach(source);
    this.exited = parts.exit.then((status) => {
      this.#onExit(status);
      return status;
    });
  }

  output(): AsyncIterable<OutputChunk> {
    return this.#queue.consume();
  }

  write(bytes: Uint8Array | string): Promise<void> {
    return this.#parts.stdin.write(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes);
  }

  closeStdin(): void {
    this.#parts.stdin.close();
  }

  resize(cols: number, rows: number): void {
    if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
      throw new ExecError(
        'invalidParams',
        `resize needs positive integer cols and rows, got ${cols}x${rows}`,
      );
    }
    if (this.#exitStatus !== undefined || this.#isClosed) return;
    this.#parts.resize?.(cols, rows);
  }

  interrupt(): void {
    this.#signalGroup('SIGINT');
  }

  kill(killSignal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.#treeGone) return;
    this.#signalGroup(killSignal);
    // Only a terminal gives job control, whose background jobs sit in groups of their own.
    const others = this.tty ? signalSessionOthers(this.pid, killSignal) : 0;
    this.#log.debug('signalled process tree', { pid: this.pid, killSignal, others });
  }

  async terminate(options?: TerminateOptions): Promise<ExitStatus> {
    const graceMs = options?.graceMs ?? DEFAULT_TERMINATE_GRACE_MS;
    if (this.#exitStatus === undefined && graceMs > 0 && !this.#treeGone) {
      this.#signalGroup(this.#parts.politeSignal);
      const timer = new AbortController();
      await Promise.race([this.exited, delay(graceMs, undefined, { signal: timer.signal }).catch(() => {})]);
      timer.abort();
    }
    // Even when the child went on the polite signal, descendants that ignored it must not survive.
    this.kill('SIGKILL');
    return this.exited;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #shutdown(): Promise<void> {
    this.kill('SIGKILL');
    await this.closed;
  }

  /** Signals the child's process group, or the child itself if it has not yet made its own group. */
  #signalGroup(killSignal: NodeJS.Signals): void {
    if (this.#treeGone || signalProcessGroup(this.pid, killSignal)) return;
    // A forked PTY child calls setsid() moments after fork returns; until then only its pid reaches
    // it. The pid is still ours to signal as long as it has not been reaped (no exit status yet).
    if (this.#exitStatus !== undefined) return;
    try {
      process.kill(this.pid, killSignal);
    } catch {
      // Exited meanwhile.
    }
  }

  #attach({ name, stream, readRemainder }: OutputSource): void {
    let open = true;
    const finish = (): void => {
      if (!open) return;
      open = false;
      this.#openStreams -= 1;
      this.#maybeClose();
    };
    stream.on('data', (bytes: Uint8Array) => this.#queue.push(name, bytes));
    stream.once('end', () => {
      if (readRemainder !== undefined) for (const bytes of readRemainder()) this.#queue.push(name, bytes);
      finish();
    });
    stream.once('close', finish);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // EIO on a PTY master is its EOF: every holder of the slave side has closed it.
      if (error.code !== 'EIO')
        this.#log.debug('output stream failed', { pid: this.pid, stream: name, error });
      finish();
    });
  }

  #setPaused(paused: boolean): void {
    // After exit only a bounded remainder is left; reading it at once keeps `closed` prompt.
    const pause = paused && this.#exitStatus === undefined;
    for (const { stream } of this.#parts.sources) {
      if (pause) stream.pause();
      else stream.resume();
    }
  }

  #onExit(status: ExitStatus): void {
    this.#exitStatus = status;
    this.#log.debug('child exited', { pid: this.pid, ...status });
    this.#setPaused(false);
    if (this.#openStreams > 0) {
      this.#drainTimer = setTimeout(() => this.#abandonStreams(), this.#parts.drainTimeoutMs);
    }
    this.#maybeClose();
  }

  #abandonStreams(): void {
    this.#log.debug('drain cap reached; abandoning output streams', {
      pid: this.pid,
      open: this.#openStreams,
    });
    this.#abandoned = true;
    for (const { stream } of this.#parts.sources) stream.destroy();
    this.#maybeClose();
  }

  #maybeClose(): void {
    const status = this.#exitStatus;
    if (status === undefined || (this.#openStreams > 0 && !this.#abandoned) || this.#isClosed) return;
    this.#isClosed = true;
    clearTimeout(this.#drainTimer);
    this.#queue.end();
    this.#parts.stdin.destroy();
    for (const { stream } of this.#parts.sources) stream.destroy();
    // Once nothing of the tree is left, stop signalling: pid_max can be as low as 32768, so its ids
    // may soon belong to strangers (any member still running keeps them reserved). An empty group
    // says so, except for a PTY whose streams were abandoned: then something outside the group (a
    // background job) still holds the terminal, and `close()` must still reach it.
    this.#treeGone = !signalProcessGroup(this.pid, 0) && !(this.tty && this.#abandoned);
    this.#resolveClosed(status);
  }
}
