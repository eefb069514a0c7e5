import { ExecError, type ExecErrorCode } from '@execd/protocol';
import { rustDebugString } from './tools/rust-format.ts';

/** Which failure of the unified-exec layer (the original's `UnifiedExecError` variants). */
export type UnifiedExecErrorKind =
  | 'createProcess'
  | 'processFailed'
  | 'unknownProcessId'
  | 'writeToStdin'
  | 'stdinClosed'
  | 'missingCommandLine'
  | 'sandboxDenied';

/** The output of a command the sandbox most likely refused. */
export interface SandboxDeniedOutput {
  /** Exit code of the refused command (-1 when unknown). */
  readonly exitCode: number;
  /** Everything it printed, lossily decoded. */
  readonly text: string;
}

/** Text of the write_stdin refusal for pipe processes (non-tty stdin is /dev/null). */
export const STDIN_CLOSED_MESSAGE =
  'stdin is closed for this session; rerun exec_command with tty=true to keep stdin open';

// Brand (Symbol.for, so two copies of this package still recognise each other's errors).
const UNIFIED_EXEC_ERROR = Symbol.for('@execd/unified-exec/UnifiedExecError');

// The protocol's closed code set has no unified-exec codes; each kind maps onto the nearest one
// and `kind` carries the precise variant (callers branch on `kind`).
const CODES: Record<UnifiedExecErrorKind, ExecErrorCode> = {
  createProcess: 'spawnFailed',
  processFailed: 'internal',
  unknownProcessId: 'notFound',
  writeToStdin: 'internal',
  stdinClosed: 'invalidRequest',
  missingCommandLine: 'invalidParams',
  sandboxDenied: 'unsupported',
};

/**
 * A failure of `UnifiedExecProcessManager` (the original's `UnifiedExecError`). `message` is the
 * original's Display text (what `write_stdin failed: …` shows); {@link debugText} is its Debug
 * form (what `exec_command failed for `…`: …` shows).
 */
export class UnifiedExecError extends ExecError {
  override name = 'UnifiedExecError';
  /** The variant; stable, branch on it. */
  readonly kind: UnifiedExecErrorKind;
  /** For `createProcess` / `processFailed` / `sandboxDenied`: the detail message. */
  readonly detail: string | undefined;
  /** For `unknownProcessId`: the id the caller named. */
  readonly processId: number | undefined;
  /** For `sandboxDenied`: what the refused command printed and its exit code. */
  readonly deniedOutput: SandboxDeniedOutput | undefined;
  /** True for a `createProcess` refused by the exec policy before anything was asked or run. */
  readonly rejectedByPolicy: boolean;

  private constructor(
    kind: UnifiedExecErrorKind,
    message: string,
    fields: {
      detail?: string;
      processId?: number;
      deniedOutput?: SandboxDeniedOutput;
      rejectedByPolicy?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(CODES[kind], message, fields.cause === undefined ? {} : { cause: fields.cause });
    this.kind = kind;
    this.detail = fields.detail;
    this.processId = fields.processId;
    this.deniedOutput = fields.deniedOutput;
    this.rejectedByPolicy = fields.rejectedByPolicy ?? false;
  }

  /** Spawning (or approving, or starting on an exec-server) failed; no process exists. */
  static createProcess(detail: string, cause?: unknown): UnifiedExecError {
    return new UnifiedExecError('createProcess', `Failed to create unified exec process: ${detail}`, {
      detail,
      cause,
    });
  }

  /**
   * The exec policy forbids the command (a `forbidden` rule, a dangerous command under `never`,
   * or a prompt that `never` cannot ask): `Rejected(<reason>)`, nothing started.
   */
  static policyRejected(reason: string): UnifiedExecError {
    const detail = `Rejected(${rustDebugString(reason)})`;
    return new UnifiedExecError('createProcess', `Failed to create unified exec process: ${detail}`, {
      detail,
      rejectedByPolicy: true,
    });
  }

  /** A running process failed (lost exec-server, broken event stream). */
  static processFailed(detail: string): UnifiedExecError {
    return new UnifiedExecError('processFailed', `Unified exec process failed: ${detail}`, { detail });
  }

  /** No stored process has this id (never existed, exited and reported, or terminated). */
  static unknownProcessId(processId: number): UnifiedExecError {
    return new UnifiedExecError('unknownProcessId', `Unknown process id ${processId}`, { processId });
  }

  /** Writing to the process's stdin failed. */
  static writeToStdin(cause?: unknown): UnifiedExecError {
    return new UnifiedExecError('writeToStdin', 'failed to write to stdin', { cause });
  }

  /** Input other than Ctrl-C for a pipe (non-tty) process. */
  static stdinClosed(): UnifiedExecError {
    return new UnifiedExecError('stdinClosed', STDIN_CLOSED_MESSAGE);
  }

  /** The derived argv is empty. */
  static missingCommandLine(): UnifiedExecError {
    return new UnifiedExecError('missingCommandLine', 'missing command line for unified exec request');
  }

  /** The command most likely failed because the sandbox refused it. */
  static sandboxDenied(detail: string, deniedOutput: SandboxDeniedOutput): UnifiedExecError {
    return new UnifiedExecError('sandboxDenied', `Command denied by sandbox: ${detail}`, {
      detail,
      deniedOutput,
    });
  }

  static {
    Object.defineProperty(UnifiedExecError.prototype, UNIFIED_EXEC_ERROR, { value: true });
  }

  /** True for a UnifiedExecError (across package copies, like `ExecError.is`). */
  static isUnifiedExecError(value: unknown): value is UnifiedExecError {
    return ExecError.is(value) && UNIFIED_EXEC_ERROR in value;
  }

  /** The variant in Rust's Debug form, e.g. `CreateProcess { message: "…" }`. */
  get debugText(): string {
    const message = rustDebugString(this.detail ?? '');
    const debug: Record<UnifiedExecErrorKind, string> = {
      createProcess: `CreateProcess { message: ${message} }`,
      processFailed: `ProcessFailed { message: ${message} }`,
      unknownProcessId: `UnknownProcessId { process_id: ${this.processId} }`,
      writeToStdin: 'WriteToStdin',
      stdinClosed: 'StdinClosed',
      missingCommandLine: 'MissingCommandLine',
      sandboxDenied: `SandboxDenied { message: ${message} }`,
    };
    return debug[this.kind];
  }
}
