import { ExecError, RpcError, TransportClosedError } from '@execd/protocol';

/** The message of anything thrown (for failure texts and logs). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A lost connection or a failed connect: recovery's business, not a process failure. */
export function isTransportLoss(error: unknown): boolean {
  return ExecError.is(error) && (error.code === 'transportClosed' || error.code === 'connectTimeout');
}

/** The server answered the WebSocket upgrade with an HTTP error (401 without a valid token, 403 ...). */
export class UpgradeRefusedError extends TransportClosedError {
  override name = 'UpgradeRefusedError';
  /** The HTTP status of the refusal. */
  readonly status: number;

  constructor(url: string, status: number) {
    super(undefined, `exec-server at ${url} refused the connection: HTTP ${status}`);
    this.status = status;
  }
}

/** Errors after which another reconnect attempt may succeed. */
export function isRetryable(error: unknown): boolean {
  // A refused token or origin will not be accepted on the next attempt either.
  if (error instanceof UpgradeRefusedError) return error.status !== 401 && error.status !== 403;
  if (isTransportLoss(error)) return true;
  // The server may not have noticed yet that the old connection is gone (it checks once asked).
  if (RpcError.is(error)) return error.code === 'sessionAlreadyAttached';
  return ExecError.is(error) && error.code === 'aborted';
}
