import type { SandboxType } from '@execd/protocol';

/** What a backend driver reports to its UnifiedExecProcess, in the order things happen. */
export interface ProcessSink {
  /** Bytes the child printed (stdout, stderr and PTY output merged in arrival order). */
  output(bytes: Uint8Array): void;
  /** The child exited (`undefined`: it is gone but its code is unknown). */
  exited(exitCode: number | undefined, sandboxDenied?: boolean): void;
  /** Every output stream has ended: nothing more will arrive. */
  closed(): void;
  /** The backend lost the process (event stream or transport failure). First message wins. */
  failed(message: string): void;
  /**
   * execd addition: the terminal waits for input after everything delivered so far (its
   * foreground program blocks reading it and the output has been quiet). Ended by more output or
   * a write.
   */
  waitingForInput(): void;
}

/**
 * The backend-specific half of a UnifiedExecProcess: a child spawned here directly
 * (`@execd/sandboxing` `spawnProcess`) or a process of an exec-server backend (in-process or
 * remote). Errors thrown by `write` are `UnifiedExecError`s.
 */
export interface ProcessDriver {
  /** The sandbox the child actually runs under (`none` when unsandboxed or unknown). */
  readonly sandboxType: SandboxType;
  /** The exec-server's process id, for exec-server backed processes. */
  readonly backendProcessId: string | undefined;
  /** True (after `attach`) when this driver reports `waitingForInput` (tty children it can probe). */
  readonly reportsInputWait?: boolean;
  /** Starts delivering events to `sink`; called exactly once, before anything else. */
  attach(sink: ProcessSink): void;
  /** Writes to stdin (PTY master for tty children). */
  write(bytes: Uint8Array): Promise<void>;
  /** SIGINT to the process group. */
  interrupt(): Promise<void>;
  /** Kills the process tree; resolves `true` once the kill was confirmed. */
  terminate(): Promise<boolean>;
  /** Kills the tree if still running and releases every handle. Idempotent. */
  close(): Promise<void>;
}
