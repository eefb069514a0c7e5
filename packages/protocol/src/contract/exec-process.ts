import type {
  OutputStream,
  ReadResponse,
  ResizeResponse,
  TerminateResponse,
  WriteResponse,
} from '../schemas/process.ts';
import type { SandboxType } from '../schemas/sandbox.ts';

/** An event of one process: output, exit and closed share one seq; `failed` is client-synthesised. */
export type ExecProcessEvent =
  | {
      readonly type: 'output';
      readonly seq: number;
      readonly stream: OutputStream;
      readonly chunk: Uint8Array;
    }
  | {
      readonly type: 'exited';
      readonly seq: number;
      readonly exitCode: number;
      readonly sandboxDenied?: boolean | undefined;
    }
  | { readonly type: 'closed'; readonly seq: number }
  | { readonly type: 'failed'; readonly message: string };

/** Read options of an `ExecProcess` (same meaning as `process/read`). */
export interface ExecReadOptions {
  readonly afterSeq?: number | undefined;
  readonly maxBytes?: number | undefined;
  readonly waitMs?: number | undefined;
  readonly cancelSignal?: AbortSignal | undefined;
}

/** Options of `ExecProcess.events`. */
export interface EventsOptions {
  /**
   * Replay events after this seq. Omitted: from the oldest event still known, without a gap
   * error. Given: an `OutputGapError` when events after it are no longer retained.
   */
  readonly afterSeq?: number | undefined;
  readonly cancelSignal?: AbortSignal | undefined;
}

/**
 * A handle on one started process, the same shape in-process (`LocalExecProcess`) and remote
 * (`RemoteProcess`), so one scenario suite runs against both.
 */
export interface ExecProcess extends AsyncDisposable {
  readonly processId: string;
  /** Sandbox actually applied; undefined from legacy peers. */
  readonly sandboxType: SandboxType | undefined;
  read(options?: ExecReadOptions): Promise<ReadResponse>;
  /** Writes stdin; `writeId` de-duplicates retries (generated when omitted). */
  write(chunk: Uint8Array, options?: { readonly writeId?: string | undefined }): Promise<WriteResponse>;
  interrupt(): Promise<void>;
  terminate(): Promise<TerminateResponse>;
  resize(cols: number, rows: number): Promise<ResizeResponse>;
  /**
   * Replays retained events after `afterSeq`, then follows live ones; ends after `closed` or
   * `failed`. With `afterSeq` given, throws `OutputGapError` when events after it are no longer
   * retained (also mid-stream, for a follower that fell behind retention); omitted, replays from
   * the oldest event still retained without an error.
   */
  events(options?: EventsOptions): AsyncIterable<ExecProcessEvent>;
  /**
   * execd addition: follows "the terminal waits for input" reports of a tty process. The listener
   * gets the seq of the last event before the wait (output after it ends the wait). Returns
   * undefined when this process cannot report it (pipes, original peers, other platforms).
   */
  onWaitingForInput?(listener: (afterSeq: number) => void): Disposable | undefined;
  /** Stops following; does not kill the process (use `terminate`). Idempotent. */
  close(): Promise<void>;
}
