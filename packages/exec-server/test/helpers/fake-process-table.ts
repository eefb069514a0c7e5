// An in-memory ProcessTable for session/transport tests where a real child is not the point
// (handshake order, resume, routing, slow clients). The test scripts output and exits.
import {
  type ExecParams,
  type ExecResponse,
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
import type { ProcessNotification, ProcessTable } from '../../src/types.ts';

interface FakeEntry {
  readonly params: ExecParams;
  readonly chunks: { seq: number; stream: 'stdout' | 'stderr' | 'pty'; chunk: Uint8Array }[];
  nextSeq: number;
  exitCode: number | null;
  closed: boolean;
  readonly writes: Uint8Array[];
}

/** A scripted process table; `output`/`exit` drive it, `shutdownCalls` shows it was reaped. */
export class FakeProcessTable implements ProcessTable {
  readonly entries: Map<string, FakeEntry> = new Map();
  readonly #listeners = new Set<(notification: ProcessNotification) => void>();
  readonly #waiters = new Set<() => void>();
  shutdownCalls = 0;

  async start(params: ExecParams): Promise<ExecResponse> {
    if (params.argv.length === 0) throw new RpcError('invalidParams', 'argv must not be empty');
    if (this.entries.has(params.processId)) {
      throw new RpcError('invalidRequest', `process ${params.processId} already exists`);
    }
    this.entries.set(params.processId, {
      params,
      chunks: [],
      nextSeq: 1,
      exitCode: null,
      closed: false,
      writes: [],
    });
    return { processId: params.processId, sandboxType: 'none' };
  }

  /** Appends an output chunk and notifies. */
  output(
    processId: string,
    data: string | Uint8Array,
    stream: 'stdout' | 'stderr' | 'pty' = 'stdout',
  ): number {
    const entry = this.#entry(processId);
    const chunk = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    const seq = entry.nextSeq++;
    entry.chunks.push({ seq, stream, chunk });
    this.#emit({ method: 'process/output', params: { processId, seq, stream, chunk } });
    return seq;
  }

  /** Records the exit, then the close, and notifies both. */
  exit(processId: string, exitCode: number): void {
    const entry = this.#entry(processId);
    entry.exitCode = exitCode;
    this.#emit({
      method: 'process/exited',
      params: { processId, seq: entry.nextSeq++, exitCode, sandboxDenied: false },
    });
    entry.closed = true;
    this.#emit({ method: 'process/closed', params: { processId, seq: entry.nextSeq++ } });
  }

  async read(params: ReadParams, cancelSignal?: AbortSignal): Promise<ReadResponse> {
    const deadline = performance.now() + (params.waitMs ?? 0);
    for (;;) {
      const entry = this.entries.get(params.processId);
      if (!entry) throw new RpcError('invalidRequest', `unknown process id ${params.processId}`);
      const after = params.afterSeq ?? 0;
      const chunks = entry.chunks.filter((chunk) => chunk.seq > after);
      const exited = entry.exitCode !== null;
      const response: ReadResponse = {
        chunks,
        nextSeq: entry.nextSeq,
        exited,
        exitCode: entry.exitCode,
        closed: entry.closed,
        failure: null,
        sandboxDenied: false,
        firstRetainedSeq: undefined,
      };
      const remaining = deadline - performance.now();
      if (chunks.length > 0 || entry.closed || remaining <= 0 || cancelSignal?.aborted) return response;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          cancelSignal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, remaining);
        this.#waiters.add(done);
        cancelSignal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  async write(params: WriteParams): Promise<WriteResponse> {
    const entry = this.entries.get(params.processId);
    if (!entry) return { status: 'unknownProcess' };
    entry.writes.push(params.chunk);
    return { status: 'accepted' };
  }

  async signal(_params: SignalParams): Promise<Record<string, never>> {
    return {};
  }

  async terminate(params: TerminateParams): Promise<TerminateResponse> {
    const entry = this.entries.get(params.processId);
    if (!entry || entry.exitCode !== null) return { running: false };
    this.exit(params.processId, 137);
    return { running: true };
  }

  async resize(_params: ResizeParams): Promise<ResizeResponse> {
    return { resized: false };
  }

  list(): ProcessListResponse {
    return {
      processes: [...this.entries.entries()].map(([processId, entry]) => ({
        processId,
        pid: undefined,
        argv: entry.params.argv,
        cwd: entry.params.cwd,
        tty: entry.params.tty,
        state: entry.closed ? 'closed' : 'running',
        exitCode: entry.exitCode ?? undefined,
        sandboxType: 'none',
        nextSeq: entry.nextSeq,
        startedAtMs: 0,
      })),
    };
  }

  subscribe(listener: (notification: ProcessNotification) => void): Disposable {
    this.#listeners.add(listener);
    return { [Symbol.dispose]: () => this.#listeners.delete(listener) };
  }

  /** Live subscribers (a session unsubscribes when it is removed). */
  get subscriberCount(): number {
    return this.#listeners.size;
  }

  async shutdown(): Promise<void> {
    this.shutdownCalls++;
    for (const processId of this.entries.keys()) {
      const entry = this.#entry(processId);
      if (entry.exitCode === null) this.exit(processId, 137);
    }
  }

  #entry(processId: string): FakeEntry {
    const entry = this.entries.get(processId);
    if (!entry) throw new Error(`no fake process ${processId}`);
    return entry;
  }

  #emit(notification: ProcessNotification): void {
    for (const listener of [...this.#listeners]) listener(notification);
    for (const wake of [...this.#waiters]) wake();
  }
}
