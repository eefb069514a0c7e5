// A scripted SpawnedProcess for state-machine tests of the process table (as the original's
// fake-process unit tests): the test decides when output arrives, when the child exits and when
// its streams end. Real children are used everywhere else.
import type { ExitStatus, OutputChunk, OutputStreamName, SpawnedProcess } from '@execd/pty-utils';
import type { LocalSpawnRequest, LocalSpawnResult, Spawner } from '../../src/local/spawner.ts';

let nextFakePid = 9_000_000;

/** A SpawnedProcess driven by the test. */
export class FakeSpawnedProcess implements SpawnedProcess {
  readonly pid: number = nextFakePid++;
  readonly tty: boolean;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<ExitStatus>;
  /** Bytes written to stdin, in order. */
  readonly written: Uint8Array[] = [];
  /** Signals received, in order. */
  readonly signals: string[] = [];
  #queue: OutputChunk[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #resolveExit!: (status: ExitStatus) => void;
  #resolveClosed!: (status: ExitStatus) => void;
  #exitStatus: ExitStatus | undefined;
  #stdinOpen: boolean;
  #closeCalls = 0;
  #closeGate: Promise<void> | undefined;

  constructor(options: { tty?: boolean; stdinOpen?: boolean } = {}) {
    this.tty = options.tty ?? false;
    this.#stdinOpen = options.stdinOpen ?? true;
    this.exited = new Promise((resolve) => {
      this.#resolveExit = resolve;
    });
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
  }

  /** How many times close() was called. */
  get closeCalls(): number {
    return this.#closeCalls;
  }

  /** Delivers a chunk of output. */
  emit(stream: OutputStreamName, text: string | Uint8Array): void {
    const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    this.#queue.push({ stream, bytes });
    this.#wake?.();
  }

  /** The child exits (streams may stay open). */
  exit(exitCode: number, signal: NodeJS.Signals | null = null): void {
    if (this.#exitStatus !== undefined) return;
    this.#exitStatus = { exitCode, signal };
    this.#resolveExit(this.#exitStatus);
    this.#maybeClosed();
  }

  /** Every output stream ends. */
  endStreams(): void {
    this.#ended = true;
    this.#wake?.();
    this.#maybeClosed();
  }

  async *output(): AsyncGenerator<OutputChunk> {
    for (;;) {
      if (this.#queue.length > 0) {
        // Swap the whole batch out: shift() on a long array is O(n) per call.
        const batch = this.#queue;
        this.#queue = [];
        yield* batch;
        continue;
      }
      if (this.#ended) {
        this.#maybeClosed();
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  async write(bytes: Uint8Array | string): Promise<void> {
    if (!this.#stdinOpen) throw new Error('stdin is closed');
    this.written.push(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes);
  }

  closeStdin(): void {
    this.#stdinOpen = false;
  }

  resize(): void {}

  interrupt(): void {
    this.signals.push('SIGINT');
  }

  kill(killSignal: NodeJS.Signals = 'SIGKILL'): void {
    this.signals.push(killSignal);
    if (killSignal === 'SIGKILL' && this.#exitStatus === undefined) {
      this.exit(137, 'SIGKILL');
      this.endStreams();
    }
  }

  async terminate(): Promise<ExitStatus> {
    this.kill('SIGKILL');
    return this.exited;
  }

  /** `close()` also waits for `gate` (a slow cleanup, as a cgroup's removal on a busy host). */
  holdClose(gate: Promise<void>): void {
    this.#closeGate = gate;
  }

  async close(): Promise<void> {
    this.#closeCalls += 1;
    this.kill('SIGKILL');
    this.endStreams();
    await this.closed;
    await this.#closeGate;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #maybeClosed(): void {
    if (this.#exitStatus !== undefined && this.#ended && this.#queue.length === 0) {
      this.#resolveClosed(this.#exitStatus);
    }
  }
}

/** A Spawner whose children are FakeSpawnedProcesses; `launched` lists them with their requests. */
export function fakeSpawner(
  options: { onSpawn?: (request: LocalSpawnRequest) => Promise<void> | void } = {},
): Spawner & { readonly launched: { request: LocalSpawnRequest; process: FakeSpawnedProcess }[] } {
  const launched: { request: LocalSpawnRequest; process: FakeSpawnedProcess }[] = [];
  const spawner = async (request: LocalSpawnRequest): Promise<LocalSpawnResult> => {
    await options.onSpawn?.(request);
    const process = new FakeSpawnedProcess({
      tty: request.tty,
      stdinOpen: request.tty || request.stdin === 'pipe',
    });
    launched.push({ request, process });
    return { process, sandboxType: 'none' };
  };
  return Object.assign(spawner, { launched });
}
