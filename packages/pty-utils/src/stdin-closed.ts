import { ExecError, type ExecErrorCode } from '@execd/protocol';

/** The `code` of the error `SpawnedProcess.write` rejects with when the child's stdin is closed. */
export const STDIN_CLOSED_CODE: 'stdinClosed' = 'stdinClosed';

const CODE: ExecErrorCode = STDIN_CLOSED_CODE;

/** Builds the rejection of a write to a closed stdin (never opened, closed by the caller, or the child went away). */
export function stdinClosedError(message: string, cause?: unknown): ExecError {
  return new ExecError(CODE, message, cause === undefined ? undefined : { cause });
}

/** True for the error `SpawnedProcess.write` rejects with when stdin is closed. */
export function isStdinClosedError(error: unknown): error is ExecError {
  return ExecError.is(error) && error.code === STDIN_CLOSED_CODE;
}
