import { decodeResult, type Logger } from '@execd/protocol';
import { describeError, isTransportLoss } from './errors.ts';
import type { RoutedEvent } from './notification-event.ts';
import { ProcessSession } from './process-session.ts';
import type { RpcConnection } from './rpc-connection.ts';

/** What the router needs from its client. */
export interface ProcessRouterOptions {
  readonly logger: Logger;
  /** How long a hole may stay open before a fill read (see `GAP_FILL_DELAY_MS`). */
  readonly gapFillDelayMs: number;
  /** The connection to fill holes on, while the client is ready; undefined otherwise. */
  readonly readyConnection: () => RpcConnection | undefined;
}

/**
 * The client's processes by id: routes pushed events to their session, fills holes in a
 * session's stream with `process/read`, and fails a session whose stream cannot be repaired
 * (terminating its process). A session leaves the routes once `closed` is published or it failed.
 */
export class ProcessRouter {
  readonly #options: ProcessRouterOptions;
  readonly #routes = new Map<string, ProcessSession>();
  readonly #fillTimers = new Map<ProcessSession, NodeJS.Timeout>();
  readonly #filling = new Set<ProcessSession>();

  constructor(options: ProcessRouterOptions) {
    this.#options = options;
  }

  /** The session routed under `processId`, created (and routed) when there is none. */
  route(processId: string): ProcessSession {
    let session = this.#routes.get(processId);
    if (session === undefined) {
      session = new ProcessSession(processId);
      this.#routes.set(processId, session);
    }
    return session;
  }

  /** The session routed under `processId`, if any. */
  lookup(processId: string): ProcessSession | undefined {
    return this.#routes.get(processId);
  }

  /** Sessions still expecting events (recovery reads each of them back). */
  live(): ProcessSession[] {
    return [...this.#routes.values()].filter((session) => session.live);
  }

  /** A pushed event; events of unknown processes are ignored. */
  accept(routed: RoutedEvent): void {
    const session = this.#routes.get(routed.processId);
    if (session === undefined) return;
    // Decisions still pending for a process that closed are no longer wanted.
    if (routed.event.type === 'closed') session.network.end(`process ${session.processId} closed`);
    session.accept(routed.event);
    this.settle(session);
  }

  /** Unroutes a finished session, or schedules a fill read for one with a hole. */
  settle(session: ProcessSession): void {
    if (session.closed || session.failure !== undefined) {
      this.unroute(session);
      return;
    }
    if (!session.needsFill) {
      this.#cancelFill(session);
      return;
    }
    if (this.#fillTimers.has(session) || this.#filling.has(session)) return;
    if (this.#options.readyConnection() === undefined) return;
    const timer = setTimeout(
      () => {
        this.#fillTimers.delete(session);
        void this.#fill(session);
      },
      session.overflowed ? 0 : this.#options.gapFillDelayMs,
    );
    this.#fillTimers.set(session, timer);
  }

  /** Re-checks every session (after a recovery). */
  settleAll(): void {
    for (const session of [...this.#routes.values()]) this.settle(session);
  }

  /** Removes a session from the routes (if it is still the routed one). */
  unroute(session: ProcessSession): void {
    if (this.#routes.get(session.processId) === session) this.#routes.delete(session.processId);
    session.network.end(`process ${session.processId} is no longer followed`);
    this.#cancelFill(session);
  }

  /** Reads everything after the last published seq and merges it (spec §2.3, §3.5). */
  async readAndMerge(conn: RpcConnection, session: ProcessSession, timeoutMs?: number): Promise<void> {
    const dropCount = session.dropCount;
    const raw = await conn.request(
      'process/read',
      { processId: session.processId, afterSeq: session.lastPublished, waitMs: 0 },
      { timeoutMs },
    );
    const gap = session.merge(decodeResult('process/read', raw), dropCount);
    if (gap !== undefined) {
      this.#options.logger.warn('process output was lost to the server retention', {
        processId: session.processId,
        firstRetainedSeq: gap,
      });
    }
  }

  /** Fails one session whose stream cannot be repaired, and terminates its process. */
  failProcess(conn: RpcConnection, session: ProcessSession, error: unknown): void {
    this.#options.logger.warn('failed to recover a process', { processId: session.processId, error });
    session.fail(`failed to recover process ${session.processId}: ${describeError(error)}`);
    this.unroute(session);
    conn.request('process/terminate', { processId: session.processId }, { cleanup: true }).catch(() => {});
  }

  /** Fails every routed session with `message` (the client could not resume its session). */
  failAll(message: string): void {
    for (const session of [...this.#routes.values()]) {
      session.fail(message);
      this.unroute(session);
    }
  }

  /** Cancels every scheduled fill (the client is closing). */
  dispose(): void {
    for (const timer of this.#fillTimers.values()) clearTimeout(timer);
    this.#fillTimers.clear();
  }

  #cancelFill(session: ProcessSession): void {
    const timer = this.#fillTimers.get(session);
    if (timer !== undefined) clearTimeout(timer);
    this.#fillTimers.delete(session);
  }

  async #fill(session: ProcessSession): Promise<void> {
    const conn = this.#options.readyConnection();
    if (!session.needsFill || conn === undefined) return;
    this.#filling.add(session);
    try {
      await this.readAndMerge(conn, session);
    } catch (error) {
      // A lost connection is recovery's job; it reads every live process again.
      if (!isTransportLoss(error)) this.failProcess(conn, session, error);
    } finally {
      this.#filling.delete(session);
      this.settle(session);
    }
  }
}
