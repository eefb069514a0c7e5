import type {
  EnvironmentInfo,
  ExecClosedNotification,
  ExecExitedNotification,
  ExecOutputDeltaNotification,
  ExecParams,
  ExecResponse,
  NetworkPolicyDecisionNotification,
  OutputStream,
  ProcessListResponse,
  ReadParams,
  ReadResponse,
  ResizeParams,
  ResizeResponse,
  SandboxType,
  SignalParams,
  TerminateParams,
  TerminateResponse,
  WriteParams,
  WriteResponse,
} from '@execd/protocol';

/**
 * A notification a process table pushes to the connection its session is attached to: the seq-
 * numbered process events, and the unsequenced decisions of a `proxied` process's network proxy.
 */
export type ProcessNotification =
  | { readonly method: 'process/output'; readonly params: ExecOutputDeltaNotification }
  | { readonly method: 'process/exited'; readonly params: ExecExitedNotification }
  | { readonly method: 'process/closed'; readonly params: ExecClosedNotification }
  | { readonly method: 'network/policyDecision'; readonly params: NetworkPolicyDecisionNotification };

/**
 * The per-session process table: one method per `process/*` RPC, with the original's semantics
 * (spec §2.4, §3.1). Errors are thrown as `RpcError` with the original's codes and texts;
 * expected outcomes (write statuses, `running: false`) are values.
 */
export interface ProcessTable {
  start(params: ExecParams): Promise<ExecResponse>;
  /** Long-poll read; `cancelSignal` abandons the wait (the connection went away). */
  read(params: ReadParams, cancelSignal?: AbortSignal): Promise<ReadResponse>;
  write(params: WriteParams): Promise<WriteResponse>;
  signal(params: SignalParams): Promise<Record<string, never>>;
  terminate(params: TerminateParams): Promise<TerminateResponse>;
  resize(params: ResizeParams): Promise<ResizeResponse>;
  list(): ProcessListResponse;
  /** Every notification of every process, in emission order. Returns an unsubscribe handle. */
  subscribe(listener: (notification: ProcessNotification) => void): Disposable;
  /**
   * Flow control from the subscriber (optional): `true` while it cannot take more notifications
   * (its client's backlog is high). The table then holds its children's output back (the
   * children block on full pipes) instead of reading on and evicting unseen output; `false`
   * resumes, in seq order. Every RPC keeps working while paused. Absent: never paused.
   */
  setOutputPaused?(paused: boolean): void;
  /** Kills every process tree and waits until each is reaped. Idempotent. */
  shutdown(): Promise<void>;
}

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

/**
 * A handle on one started process, the same shape in-process (`LocalProcess`) and remote
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
  events(options?: {
    readonly afterSeq?: number | undefined;
    readonly cancelSignal?: AbortSignal | undefined;
  }): AsyncIterable<ExecProcessEvent>;
  /** Stops following; does not kill the process (use `terminate`). Idempotent. */
  close(): Promise<void>;
}

/** Starts processes somewhere: in this process, or on a remote exec-server. */
export interface ExecBackend extends AsyncDisposable {
  start(params: ExecParams): Promise<ExecProcess>;
  environmentInfo(): Promise<EnvironmentInfo>;
  /** Terminates every process it started and releases the connection. Idempotent. */
  close(): Promise<void>;
}
