import { ExecError, type ExecErrorCode } from '@execd/protocol';

/** The `code` of the error `SpawnedProcess.write` rejects with when the child's stdin is closed. */
export const STDIN_CLOSED_CODE = 'stdinClosed';

// HACK: `stdinClosed` is not yet a member of `ExecErrorCode` in @execd/protocol (requested in the
// pty-utils report); until it is, the code is widened here, in one place, and read via the guard.
const CODE = STDIN_CLOSED_CODE as string as ExecErrorCode;

/** Builds the rejection of a write to a closed stdin (never opened, closed by the caller, or the child went away). */
export function stdinClosedError(message: string, cause?: unknown): ExecError {
  return new ExecError(CODE, message, cause === undefined ? undefined : { cause });
}

/** True for the error `SpawnedProcess.write` rejects with when stdin is closed. */
export function isStdinClosedError(error: unknown): error is ExecError {
  return ExecError.is(error) && (error.code as string) === STDIN_CLOSED_CODE;
}
