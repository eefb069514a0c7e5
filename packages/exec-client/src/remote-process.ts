import {
  abortedBy,
  type ClientRequestMethod,
  decodeResult,
  ExecError,
  OutputGapError,
  type ReadResponse,
  type ResizeResponse,
  RpcError,
  type SandboxType,
  type TerminateResponse,
  type WriteResponse,
} from '@execd/protocol';
import type {
  EventsOptions,
  ExecProcess,
  ExecProcessEvent,
  ExecReadOptions,
  NetworkDenial,
} from '@execd/protocol/contract';
import { CLIENT_EVENT_LOG_MAX_BYTES } from './limits.ts';
import type { ProcessSession } from './process-session.ts';
import { replayFromServer } from './server-replay.ts';

// Longest single wait of an event follower; it simply waits again (setTimeout caps at 2^31-1).
const FOLLOW_WAIT_MS = 2 ** 31 - 1;

/** How a RemoteProcess sends a request through its client. */
export interface CallOptions {
  /** After a lost connection, wait for the session to be resumed and send the request again. */
  readonly retry: boolean;
  readonly timeoutMs?: number | undefined;
  /** May use the connection's reserved cleanup slot (`process/terminate`). */
  readonly cleanup?: boolean | undefined;
  /** Abandons the call (rejects with an `aborted` ExecError); the server may still act on it. */
  readonly cancelSignal?: AbortSignal | undefined;
}

/** @internal What a RemoteProcess needs from its ExecServerClient. */
export interface ProcessLink {
  /**
   * Sends a request once the client is usable (waiting out a recovery). Rejects with a
   * TransportClosedError once the client failed or was closed.
   */
  call(method: ClientRequestMethod, params: unknown, options: CallOptions): Promise<unknown>;
  /** Aborted when the client is closed. */
  readonly closedSignal: AbortSignal;
  /** True when the server said (at `initialize`) that it reports `process/waitingForInput`. */
  readonly reportsWaitingForInput: () => boolean;
}

function isTransportClosed(error: unknown): boolean {
  return ExecError.is(error) && error.code === 'transportClosed';
}

/**
 * A process on a remote exec-server (the original's `RemoteProcess`): the same `ExecProcess`
 * surface as the in-process one. Reads, writes and signals survive a reconnect: they wait while
 * the client resumes its session and are then sent again (writes with the same `writeId`, which
 * the server de-duplicates). If the session cannot be resumed, reads answer the synthesized
 * failure response (`failure` set, spec §3.5) and `events()` ends with a `failed` event.
 *
 * Gaps: `read()` passes the server's `firstRetainedSeq` through (execd servers only); `events()`
 * throws an `OutputGapError` where output was lost for good (evicted on the server before the
 * client got it). It never skips silently.
 */
export class RemoteProcess implements ExecProcess {
  readonly processId: string;
  readonly sandboxType: SandboxType | undefined;
  readonly #link: ProcessLink;
  readonly #session: ProcessSession;
  readonly #closing = new AbortController();

  /** @internal Created by `ExecServerClient.start`. */
  constructor(link: ProcessLink, session: ProcessSession, sandboxType: SandboxType | undefined) {
    this.#link = link;
    this.#session = session;
    this.processId = session.processId;
    this.sandboxType = sandboxType;
  }

  /** True while the client can still reach the process (not closed, not failed). */
  get live(): boolean {
    return this.#session.live;
  }

  /**
   * Connections the process's managed-network proxy refused, oldest first (the newest 1000), the
   * same records as `LocalExecProcess.networkDenials()`, built from the server's
   * `network/policyDecision` notifications. Best effort like every notification: one pushed while
   * the connection was away is not replayed. Empty for a process without a managed network.
   */
  networkDenials(): readonly NetworkDenial[] {
    return this.#session.network.denials();
  }

  /**
   * Follows the server's `process/waitingForInput` reports (execd servers on Linux): the listener
   * gets the seq of the last event before each wait. Undefined when the server cannot report it.
   */
  onWaitingForInput(listener: (afterSeq: number) => void): Disposable | undefined {
    if (!this.#link.reportsWaitingForInput()) return undefined;
    return this.#session.waitingForInput.event(listener);
  }

  /** `process/read`; after a failed recovery, the synthesized failure response. */
  async read(options: ExecReadOptions = {}): Promise<ReadResponse> {
    if (this.#session.failure !== undefined) return this.#session.failureResponse();
    const params = {
      processId: this.processId,
      afterSeq: options.afterSeq,
      maxBytes: options.maxBytes,
      waitMs: options.waitMs,
    };
    try {
      const raw = await this.#link.call('process/read', params, {
        retry: true,
        cancelSignal: options.cancelSignal,
      });
      return decodeResult('process/read', raw);
    } catch (error) {
      if (this.#session.failure !== undefined && isTransportClosed(error))
        return this.#session.failureResponse();
      throw error;
    }
  }

  /** Writes stdin; the `writeId` defaults to this process's next `"1"`, `"2"`, ... */
  async write(
    chunk: Uint8Array,
    options: { readonly writeId?: string | undefined } = {},
  ): Promise<WriteResponse> {
    const writeId = options.writeId ?? this.#session.nextWriteId();
    const raw = await this.#link.call(
      'process/write',
      { processId: this.processId, chunk, writeId },
      { retry: true },
    );
    return decodeResult('process/write', raw);
  }

  /** SIGINT to the remote process group. */
  async interrupt(): Promise<void> {
    await this.#link.call(
      'process/signal',
      { processId: this.processId, signal: 'interrupt' },
      { retry: true },
    );
  }

  /** SIGKILL to the remote process group; `running: false` once it had exited. */
  async terminate(): Promise<TerminateResponse> {
    const raw = await this.#link.call(
      'process/terminate',
      { processId: this.processId },
      { retry: true, cleanup: true },
    );
    return decodeResult('process/terminate', raw);
  }

  /** Resizes the terminal; an `unsupported` ExecError on servers without `process/resize`. */
  async resize(cols: number, rows: number): Promise<ResizeResponse> {
    try {
      const raw = await this.#link.call(
        'process/resize',
        { processId: this.processId, cols, rows },
        { retry: true },
      );
      return decodeResult('process/resize', raw);
    } catch (error) {
      if (RpcError.is(error) && error.code === 'methodNotFound') {
        throw new ExecError('unsupported', 'this exec-server does not implement process/resize', {
          cause: error,
        });
      }
      throw error;
    }
  }

  /**
   * Replays events after `afterSeq`, then follows live ones, in seq order, each once; ends after
   * `closed`, after a `failed` event, or quietly when this handle or its client is closed.
   * Events older than the client's log (256 events / 1 MiB) are paged from the server's
   * retention. With `afterSeq` given, throws `OutputGapError` where output is lost for good
   * (evicted on the server too); omitted, starts at the oldest event in the client's log.
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<ExecProcessEvent, void, undefined> {
    const quiet = AbortSignal.any([this.#closing.signal, this.#link.closedSignal]);
    const signal =
      options.cancelSignal === undefined ? quiet : AbortSignal.any([quiet, options.cancelSignal]);
    const session = this.#session;
    let cursor = options.afterSeq ?? 0;
    // Only an explicit cursor can be "too old"; the default means "whatever is still known".
    let strict = options.afterSeq !== undefined;
    for (;;) {
      if (quiet.aborted) return;
      if (signal.aborted) throw abortedBy(signal, 'event stream');
      if (strict && session.log.hasGapAfter(cursor)) {
        // Behind the client's log (a slow follower, or a burst of recovered output): page the
        // missing events from the server's retention rather than report a gap it can still fill.
        const replay = replayFromServer(cursor, {
          read: (afterSeq) =>
            this.read({ afterSeq, maxBytes: CLIENT_EVENT_LOG_MAX_BYTES, cancelSignal: signal }),
          stopBefore: session.log.firstSeq ?? session.lastPublished + 1,
          exitInLog: session.log.after(0).some((event) => event.type === 'exited'),
        });
        for await (const event of replay) {
          cursor = event.seq;
          yield event;
        }
        if (session.failure !== undefined) {
          yield { type: 'failed', message: session.failure };
          return;
        }
        continue;
      }
      const events = session.log.after(cursor);
      for (const event of events) {
        if (strict && event.seq > cursor + 1 && session.isGapBefore(event.seq))
          throw new OutputGapError(event.seq);
        strict = true;
        cursor = event.seq;
        yield event;
        if (event.type === 'closed') return;
      }
      strict = true;
      if (events.length > 0) continue;
      if (session.failure !== undefined) {
        yield { type: 'failed', message: session.failure };
        return;
      }
      try {
        await session.changed.wait(FOLLOW_WAIT_MS, signal);
      } catch {
        if (quiet.aborted) return;
        throw abortedBy(signal, 'event stream');
      }
    }
  }

  /** Stops every follower of this handle; the process keeps running (use `terminate`). Idempotent. */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
