import type {
  ExecClosedNotification,
  ExecExitedNotification,
  ExecOutputDeltaNotification,
  ExecParams,
  ExecResponse,
  ExecWaitingForInputNotification,
  FsMissingChangedNotification,
  HttpRequestBodyDeltaNotification,
  NetworkPolicyDecisionNotification,
  ProcessListResponse,
  ReadParams,
  ReadResponse,
  ResizeParams,
  ResizeResponse,
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
  | { readonly method: 'process/waitingForInput'; readonly params: ExecWaitingForInputNotification }
  | { readonly method: 'network/policyDecision'; readonly params: NetworkPolicyDecisionNotification };

/** A notification about a connection's own work rather than a process's: a streamed HTTP body. */
export type ConnectionNotification =
  | {
      readonly method: 'http/request/bodyDelta';
      readonly params: HttpRequestBodyDeltaNotification;
    }
  | { readonly method: 'fs/missingChanged'; readonly params: FsMissingChangedNotification };

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
