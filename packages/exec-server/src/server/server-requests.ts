import {
  ExecError,
  type Logger,
  NOOP_LOGGER,
  type RequestId,
  RpcError,
  type RpcMessage,
  requestMessage,
  type WireError,
} from '@execd/protocol';

/**
 * Requests one connection may have sent to its client and not yet seen answered (the original's
 * `MAX_IN_FLIGHT_SERVER_CALLS` idea). One per waiting `host:port` of a proxied process; past it a
 * new question fails at once (the connection is denied, uncached) instead of growing a backlog.
 */
export const MAX_PENDING_SERVER_REQUESTS = 1024;

/** What became of a response or error the client sent. */
export type ServerResponseOutcome =
  /** It answered a request in flight. */
  | 'settled'
  /** It answers a request this connection sent but no longer waits for (cancelled, timed out). */
  | 'stale'
  /** No request of this connection ever had that id: a protocol violation. */
  | 'unknown';

interface PendingRequest {
  readonly method: string;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** Options of {@link ServerRequests}. */
export interface ServerRequestsOptions {
  /** Sends one request frame to the client (never dropped while the connection is open). */
  readonly send: (message: RpcMessage) => void;
  /** Prefix of the string ids (`np-1`, `np-2`, ...): never confused with a client's integer ids. */
  readonly idPrefix: string;
  readonly logger?: Logger | undefined;
}

/**
 * The requests a server sends to its client on one connection (`network/policyRequest`): ids,
 * the pending table, answers matched by id in any order, cancellation, and failing everything
 * when the connection goes away. Transport-free.
 */
export class ServerRequests {
  readonly #send: (message: RpcMessage) => void;
  readonly #prefix: string;
  readonly #logger: Logger;
  readonly #pending = new Map<string, PendingRequest>();
  #issued = 0;
  #closedWith: unknown;

  constructor(options: ServerRequestsOptions) {
    this.#send = options.send;
    this.#prefix = options.idPrefix;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  /** Requests waiting for their answer. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Sends `method` to the client and resolves with its result. Rejects with the client's error
   * (an `RpcError`), when `cancelSignal` aborts (its reason), when too many are pending, or when
   * the connection went away (`transportClosed`).
   */
  request(method: string, params: unknown, cancelSignal?: AbortSignal): Promise<unknown> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    if (cancelSignal?.aborted) return Promise.reject(cancelSignal.reason);
    if (this.#pending.size >= MAX_PENDING_SERVER_REQUESTS) {
      return Promise.reject(
        new ExecError(
          'protocol',
          `more than ${MAX_PENDING_SERVER_REQUESTS} requests to the client are pending`,
        ),
      );
    }
    this.#issued += 1;
    const id = `${this.#prefix}${this.#issued}`;
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        if (this.#pending.delete(id)) reject(cancelSignal?.reason);
      };
      const settle = (): void => cancelSignal?.removeEventListener('abort', onAbort);
      this.#pending.set(id, {
        method,
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      cancelSignal?.addEventListener('abort', onAbort, { once: true });
      this.#logger.trace('server request out', { id, method });
      this.#send(requestMessage(id, method, params));
    });
  }

  /** Matches a client response or error to its request. */
  settle(message: Extract<RpcMessage, { kind: 'response' | 'error' }>): ServerResponseOutcome {
    const id = message.id;
    const key = typeof id === 'string' ? id : undefined;
    const pending = key === undefined ? undefined : this.#pending.get(key);
    if (pending === undefined || key === undefined) return this.#wasIssued(id) ? 'stale' : 'unknown';
    this.#pending.delete(key);
    this.#logger.trace('server request answered', {
      id,
      method: pending.method,
      ok: message.kind === 'response',
    });
    if (message.kind === 'response') pending.resolve(message.result);
    else pending.reject(RpcError.fromWire(message.error as WireError));
    return 'settled';
  }

  /** Fails every pending request with `error`, and every later one. Idempotent. */
  close(error: unknown): void {
    this.#closedWith ??= error;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) request.reject(this.#closedWith);
  }

  #wasIssued(id: RequestId | null): boolean {
    if (typeof id !== 'string' || !id.startsWith(this.#prefix)) return false;
    const digits = id.slice(this.#prefix.length);
    if (!/^[1-9]\d*$/.test(digits)) return false;
    return Number(digits) <= this.#issued;
  }
}
