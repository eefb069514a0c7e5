import {
  abortedBy,
  OutputGapError,
  type ReadResponse,
  type ResizeResponse,
  type SandboxType,
  type TerminateResponse,
  type WriteResponse,
} from '@execd/protocol';
import type {
  EventsOptions,
  ExecProcess,
  ExecProcessEvent,
  ExecReadOptions,
  NetworkDenial,
} from '@execd/protocol/contract';
import { MAX_TIMER_MS } from './limits.ts';
import type { LocalProcessTable } from './local-process-table.ts';
import type { ProcessRecord } from './process-record.ts';

// In-process writes are numbered across every handle, as the original's `local-{n}` ids.
let localWriteCounter = 0;

/**
 * The in-process `ExecProcess` handle on one process of a LocalProcessTable (what unified-exec
 * uses locally). Calls go through the table with the wire semantics; `events()` follows the
 * process's own replay history, so it keeps working after the table has evicted the entry.
 */
export class LocalExecProcess implements ExecProcess {
  readonly processId: string;
  readonly sandboxType: SandboxType | undefined;
  readonly #table: LocalProcessTable;
  readonly #record: ProcessRecord;
  // Aborted by close(): every follower ends quietly.
  readonly #closing = new AbortController();

  /** `ownerSignal` (the backend's) ends every follower when it aborts, like `close()`. */
  constructor(
    table: LocalProcessTable,
    record: ProcessRecord,
    options: {
      readonly sandboxType: SandboxType | undefined;
      readonly ownerSignal?: AbortSignal | undefined;
    },
  ) {
    this.#table = table;
    this.#record = record;
    this.processId = record.processId;
    this.sandboxType = options.sandboxType;
    const owner = options.ownerSignal;
    if (owner !== undefined) {
      if (owner.aborted) this.#closing.abort();
      else
        owner.addEventListener('abort', () => this.#closing.abort(), {
          once: true,
          signal: this.#closing.signal,
        });
    }
  }

  /** `process/read` on this process. */
  read(options: ExecReadOptions = {}): Promise<ReadResponse> {
    return this.#table.read(
      {
        processId: this.processId,
        afterSeq: options.afterSeq,
        maxBytes: options.maxBytes,
        waitMs: options.waitMs,
      },
      options.cancelSignal,
    );
  }

  /** Writes stdin; without a `writeId` one is generated (`local-{n}`). */
  write(chunk: Uint8Array, options: { readonly writeId?: string | undefined } = {}): Promise<WriteResponse> {
    localWriteCounter += 1;
    const writeId = options.writeId ?? `local-${localWriteCounter}`;
    return this.#table.write({ processId: this.processId, chunk, writeId });
  }

  /** SIGINT to the process group. */
  async interrupt(): Promise<void> {
    await this.#table.signal({ processId: this.processId, signal: 'interrupt' });
  }

  /** SIGKILL to the process group; `running: false` once it had exited. */
  terminate(): Promise<TerminateResponse> {
    return this.#table.terminate({ processId: this.processId });
  }

  /**
   * The connections this process's managed-network proxy refused, oldest first (empty unless
   * `proxied`): what an agent offers to approve before retrying ("approve and retry"). Still
   * available after the process closed and its table entry was evicted.
   */
  networkDenials(): readonly NetworkDenial[] {
    return this.#record.networkDenials();
  }

  /** Resizes the terminal (tty only). */
  resize(cols: number, rows: number): Promise<ResizeResponse> {
    return this.#table.resize({ processId: this.processId, cols, rows });
  }

  /**
   * Replays the known events after `afterSeq`, then follows live ones; ends after `closed`, or
   * quietly when this handle is closed. Throws `OutputGapError` when the requested events are no
   * longer retained (including a follower that fell further behind than retention), and an
   * `aborted` ExecError when `cancelSignal` aborts.
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<ExecProcessEvent, void, undefined> {
    const signal =
      options.cancelSignal === undefined
        ? this.#closing.signal
        : AbortSignal.any([this.#closing.signal, options.cancelSignal]);
    let cursor = options.afterSeq ?? 0;
    // Only an explicit cursor can be "too old"; the default means "whatever is still known".
    let strict = options.afterSeq !== undefined;
    for (;;) {
      if (this.#closing.signal.aborted) return;
      if (signal.aborted) throw abortedBy(signal, 'event stream');
      const { events, firstRetainedSeq } = this.#record.eventsAfter(cursor);
      if (firstRetainedSeq !== undefined && strict) throw new OutputGapError(firstRetainedSeq);
      strict = true;
      for (const event of events) {
        cursor = event.seq;
        yield event;
        if (event.type === 'closed') return;
      }
      if (events.length > 0) continue;
      try {
        await this.#record.changed.wait(MAX_TIMER_MS, signal);
      } catch {
        if (this.#closing.signal.aborted) return;
        throw abortedBy(signal, 'event stream');
      }
    }
  }

  /**
   * Follows the terminal's input waits (tty children on Linux); the listener gets the seq of the
   * last event before each wait. Ends with this handle. Undefined when the process cannot tell.
   */
  onWaitingForInput(listener: (afterSeq: number) => void): Disposable | undefined {
    if (this.#closing.signal.aborted) return undefined;
    const subscription = this.#record.onWaitingForInput(listener);
    if (subscription === undefined) return undefined;
    const stop = (): void => subscription[Symbol.dispose]();
    this.#closing.signal.addEventListener('abort', stop, { once: true });
    return {
      [Symbol.dispose]: () => {
        this.#closing.signal.removeEventListener('abort', stop);
        stop();
      },
    };
  }

  /** Stops every follower of this handle; the process keeps running (use `terminate`). Idempotent. */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
