import { setTimeout as sleep } from 'node:timers/promises';
import { ExecError, TransportClosedError } from '@execd/protocol';
import { reconnectDelayMs } from './backoff.ts';
import type { ResolvedClientOptions } from './client-options.ts';
import { describeError, isRetryable, isTransportLoss } from './errors.ts';
import type { ProcessRouter } from './process-router.ts';
import type { RpcConnection } from './rpc-connection.ts';
import type { HandshakeTimeouts } from './session-handshake.ts';

/** What session recovery needs of its client. */
export interface RecoveryHost {
  readonly options: ResolvedClientOptions;
  readonly router: ProcessRouter;
  /** Aborted when the client closes. */
  readonly closedSignal: AbortSignal;
  /** Whether the client is still recovering (it fails or closes meanwhile). */
  isRecovering(): boolean;
  /** The client's current connection. */
  connection(): RpcConnection | undefined;
  /** The session to resume. */
  sessionId(): string;
  /** Opens a connection, makes it current and runs `initialize` + `initialized` on it. */
  handshake(resumeSessionId: string, timeouts: HandshakeTimeouts): Promise<RpcConnection>;
  /** The client starts recovering. */
  recovering(): void;
  /** The session was resumed: the client is `ready` again. */
  ready(): void;
  /** Recovery failed for good: every process fails with `message`. */
  fail(message: string): void;
}

/**
 * Resumes a client's session after a lost connection (spec §2.3): reconnects with backoff until
 * the recovery deadline, terminates the processes whose start was cut off by the loss, and
 * re-reads every live process on the resumed connection.
 */
export class SessionRecovery {
  readonly #host: RecoveryHost;
  readonly #inflightStarts = new Set<Promise<unknown>>();
  readonly #orphans = new Set<string>();
  #current: Promise<void> = Promise.resolve();

  constructor(host: RecoveryHost) {
    this.#host = host;
  }

  /** Settles when the current (or last) recovery ended. */
  get settled(): Promise<void> {
    return this.#current;
  }

  /** A `process/start` request went out: a recovery waits for it before resuming. */
  startSent(request: Promise<unknown>): void {
    this.#inflightStarts.add(request);
  }

  /** A `process/start` request settled. */
  startSettled(request: Promise<unknown>): void {
    this.#inflightStarts.delete(request);
  }

  /** A start cut off by a lost connection: the process is terminated once the session resumes. */
  orphan(processId: string): void {
    this.#orphans.add(processId);
  }

  /**
   * The client's current connection was lost (for `reason`) while it was ready: its session is
   * resumed in the background, or a stdio client fails at once.
   */
  connectionLost(reason: string): void {
    const host = this.#host;
    const disconnect = `exec-server transport disconnected: ${reason}`;
    if (host.options.command !== undefined) {
      // The server ended the session with its stdin (it kills its processes at EOF): there is
      // nothing to resume, as the original's stdio client (spec §2.1).
      host.fail(disconnect);
      return;
    }
    host.options.logger.debug('exec-server connection lost; resuming the session', { reason });
    host.recovering();
    this.#current = this.#recover(disconnect);
  }

  async #recover(disconnect: string): Promise<void> {
    const host = this.#host;
    // Starts cut off by the loss settle first, so the set of processes to recover is final.
    await Promise.allSettled([...this.#inflightStarts]);
    const options = host.options;
    const deadline = performance.now() + options.recoveryTimeoutMs;
    let lastError: unknown = new ExecError(
      'connectTimeout',
      'no reconnect attempt fit in the recovery deadline',
    );
    for (let attempt = 0; host.isRecovering(); attempt++) {
      const delay = reconnectDelayMs(attempt, {
        initialMs: options.recoveryInitialDelayMs,
        maxMs: options.recoveryMaxDelayMs,
        jitter: 0.2,
      });
      if (performance.now() + delay >= deadline) break;
      try {
        if (delay > 0) await sleep(delay, undefined, { signal: host.closedSignal });
        await this.#resumeOnce(deadline);
        if (!host.connection()?.isOpen) {
          throw new TransportClosedError(undefined, 'connection lost during recovery');
        }
      } catch (error) {
        if (!host.isRecovering()) return;
        // An attempt the deadline cut short only says that time ran out ("timed out connecting
        // after 6 ms"); what an earlier attempt met (a refusal, a real timeout) says why.
        const cutShort =
          attempt > 0 &&
          performance.now() >= deadline - 1 &&
          ExecError.is(error) &&
          error.code === 'connectTimeout';
        if (!cutShort) lastError = error;
        host.options.logger.debug('session resume attempt failed', { attempt, error });
        if (!isRetryable(error)) break;
        continue;
      }
      host.ready();
      host.router.settleAll();
      return;
    }
    if (!host.isRecovering()) return;
    host.fail(`${disconnect}; failed to resume exec-server session: ${describeError(lastError)}`);
  }

  async #resumeOnce(deadline: number): Promise<void> {
    const options = this.#host.options;
    const remaining = (): number => Math.max(1, deadline - performance.now());
    try {
      await this.#resumeOn(
        await this.#host.handshake(this.#host.sessionId(), {
          connectTimeoutMs: Math.min(options.connectTimeoutMs, remaining()),
          initializeTimeoutMs: Math.min(options.initializeTimeoutMs, remaining()),
        }),
        remaining,
      );
    } finally {
      // An accepted client's replacement slot frees once its attempt ended, either way.
      options.channelSource?.attemptDone();
    }
  }

  /** Terminates the orphans and re-reads every live process on a resumed connection. */
  async #resumeOn(conn: RpcConnection, remaining: () => number): Promise<void> {
    const router = this.#host.router;
    try {
      const orphans = [...this.#orphans];
      this.#orphans.clear();
      // Handled at once: if this attempt fails midway nobody awaits them, and an orphan whose
      // terminate did not go through is kept for the next attempt.
      const cleanup = orphans.map((processId) =>
        conn
          .request('process/terminate', { processId }, { cleanup: true, timeoutMs: remaining() })
          .catch(() => this.#orphans.add(processId)),
      );
      await Promise.all(
        router.live().map(async (session) => {
          try {
            await router.readAndMerge(conn, session, remaining());
          } catch (error) {
            if (isTransportLoss(error) || (ExecError.is(error) && error.code === 'aborted')) throw error;
            router.failProcess(conn, session, error);
          }
        }),
      );
      await Promise.allSettled(cleanup);
    } catch (error) {
      conn.terminate(`session recovery failed: ${describeError(error)}`);
      throw error;
    }
  }
}
