import type { Environment } from '../environment/environment.ts';
import type { AdditionalPermissions, SandboxPermissions } from '../tools/exec-command-args.ts';
import type { ShellType } from '../tools/shell.ts';

/** One exec_command, normalised by the handler. */
export interface ExecCommandRequest {
  /** The tool call (events and listings refer to it). */
  readonly callId: string;
  /** Reserved with `allocateProcessId()`; released by the manager on every failure. */
  readonly processId: number;
  /** argv, shell included (`[shell, '-lc', cmd]`). */
  readonly command: readonly string[];
  /** The model's `cmd`, shown in listings. */
  readonly hookCommand: string;
  /** Absolute working directory on the executor. */
  readonly cwd: string;
  readonly environment: Environment;
  /** The shell family of `command[0]` (decides shell-snapshot eligibility). */
  readonly shellType: ShellType;
  readonly tty: boolean;
  /** The model's `yield_time_ms` (clamped to 250..30,000 ms here). */
  readonly yieldTimeMs: number;
  readonly maxOutputTokens?: number | undefined;
  readonly sandboxPermissions: SandboxPermissions;
  readonly justification?: string | undefined;
  /** The model's `prefix_rule` (offered to the Approver as a rule to keep). */
  readonly prefixRule?: readonly string[] | undefined;
  /** The model's `additional_permissions` (used with `with_additional_permissions`). */
  readonly additionalPermissions?: AdditionalPermissions | undefined;
  /** Cancels the call: a pending approval is abandoned, output collection returns early. */
  readonly cancelSignal?: AbortSignal | undefined;
}

/** One write_stdin (an empty `input` polls). */
export interface WriteStdinRequest {
  /** The model's `session_id`. */
  readonly processId: number;
  readonly input: string;
  /** The model's `yield_time_ms` (clamped per spec §4.2). */
  readonly yieldTimeMs: number;
  readonly maxOutputTokens?: number | undefined;
  /** Cancels the call: output collection returns early (the process keeps running). */
  readonly cancelSignal?: AbortSignal | undefined;
}

/** One row of `listProcesses()`. */
export interface ProcessListing {
  /** The exec_command call that started it. */
  readonly itemId: string;
  readonly processId: number;
  /** The model's `cmd`. */
  readonly command: string;
  readonly cwd: string;
  readonly environmentId: string;
  readonly tty: boolean;
  /** False once it exited (it stays listed until a call reports the exit). */
  readonly running: boolean;
}
