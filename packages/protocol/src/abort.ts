import { ExecError } from './errors.ts';

/**
 * The error of an operation that `signal` cancelled: the abort reason itself when it is an
 * ExecError (a close or timeout that already says why), else an `aborted` ExecError
 * (`<what> was cancelled`) with the reason as its cause.
 */
export function abortedBy(signal: AbortSignal, what: string): ExecError {
  const reason: unknown = signal.reason;
  return ExecError.is(reason) ? reason : new ExecError('aborted', `${what} was cancelled`, { cause: reason });
}

/** `promise`, or a rejection with {@link abortedBy}`(signal, what)` once `signal` aborts first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, what = 'the call'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortedBy(signal, what));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
