import {
  abortedBy,
  type ClientRequestMethod,
  ExecError,
  type Logger,
  TransportClosedError,
  untilAborted,
} from '@execd/protocol';
import type { ClientStateTracker } from './client-state-tracker.ts';
import type { CallOptions } from './remote-process.ts';
import type { RpcConnection } from './rpc-connection.ts';
import { activeTraceContext } from './trace-propagation.ts';

/** What {@link SessionCalls} needs of its client. */
export interface SessionCallsHost {
  readonly state: ClientStateTracker;
  readonly logger: Logger;
  /** The client's current connection (set whenever it is `ready`). */
  connection(): RpcConnection | undefined;
  /** Settles when the current (or last) recovery ended. */
  recovery(): Promise<void>;
  /** `conn`, the current connection, is going away but its close event has not run yet. */
  lost(conn: RpcConnection, reason: string): void;
}

/**
 * Requests on a client's session, whichever connection carries it: each waits out a recovery,
 * fails once the client failed or closed, and (with `retry`) is sent again after a resume.
 */
export class SessionCalls {
  readonly #host: SessionCallsHost;

  constructor(host: SessionCallsHost) {
    this.#host = host;
  }

  /** The current connection once the client is ready; waits while it recovers. */
  async usableConnection(cancelSignal?: AbortSignal): Promise<RpcConnection> {
    const host = this.#host;
    for (;;) {
      if (cancelSignal?.aborted) throw abortedBy(cancelSignal, 'the call');
      switch (host.state.current) {
        case 'ready': {
          const conn = host.connection()!;
          if (conn.isOpen) return conn;
          // The socket is going away but its close event has not run yet.
          host.lost(conn, conn.closeReason ?? 'websocket closing');
          continue;
        }
        case 'recovering':
          await (cancelSignal === undefined ? host.recovery() : untilAborted(host.recovery(), cancelSignal));
          continue;
        case 'failed':
          throw new TransportClosedError(undefined, host.state.failure);
        case 'closed':
          throw new TransportClosedError(undefined, 'exec-server client is closed');
      }
    }
  }

  /** Sends one request; with `retry` it is sent again when a lost connection cut it off. */
  async call(method: ClientRequestMethod, params: unknown, options: CallOptions): Promise<unknown> {
    // Read before the first await: the caller's context, whenever the request goes out.
    const trace = activeTraceContext();
    for (;;) {
      const conn = await this.usableConnection(options.cancelSignal);
      try {
        return await conn.request(method, params, { ...options, trace });
      } catch (error) {
        const lost = ExecError.is(error) && error.code === 'transportClosed' && !conn.isOpen;
        if (options.retry && lost && this.#host.state.current !== 'closed') {
          this.#host.logger.debug('retrying a request after the connection was lost', { method });
          continue;
        }
        throw error;
      }
    }
  }
}
