import { ExecError } from '@execd/protocol';

/** The message of anything thrown (for failure texts and logs). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The error of a call that `signal` cancelled: its reason when that is an ExecError, else `aborted`. */
export function abortedBy(signal: AbortSignal, what: string): ExecError {
  const reason: unknown = signal.reason;
  return ExecError.is(reason) ? reason : new ExecError('aborted', `${what} was cancelled`, { cause: reason });
}

/** A lost connection or a failed connect: recovery's business, not a process failure. */
export function isTransportLoss(error: unknown): boolean {
  return ExecError.is(error) && (error.code === 'transportClosed' || error.code === 'connectTimeout');
}
