import { ChangeSignal, Emitter, type ReadResponse } from '@execd/protocol';
import { EventLog, type SequencedEvent } from '@execd/protocol/contract';
import {
  CLIENT_EVENT_LOG_MAX_BYTES,
  CLIENT_EVENT_LOG_MAX_EVENTS,
  MAX_PENDING_PROCESS_EVENT_BYTES,
  MAX_PENDING_PROCESS_EVENTS,
} from './limits.ts';
import { planReadMerge } from './read-merge.ts';
import { RemoteProcessNetwork } from './remote-network.ts';

/** Limits of one session's buffers (defaults: the original client's). */
export interface ProcessSessionLimits {
  readonly pendingEvents: number;
  readonly pendingBytes: number;
  readonly logEvents: number;
  readonly logBytes: number;
}

const DEFAULT_LIMITS: ProcessSessionLimits = {
  pendingEvents: MAX_PENDING_PROCESS_EVENTS,
  pendingBytes: MAX_PENDING_PROCESS_EVENT_BYTES,
  logEvents: CLIENT_EVENT_LOG_MAX_EVENTS,
  logBytes: CLIENT_EVENT_LOG_MAX_BYTES,
};

function eventBytes(event: SequencedEvent): number {
  return event.type === 'output' ? event.chunk.byteLength : 0;
}

/**
 * The client's view of one remote process (the original's `SessionState`): pushed events arrive
 * in any order and are published strictly in seq order, each exactly once, into a bounded replay
 * log that `events()` followers read.
 *
 * ```
 *  notification/read --> [reorder buffer] --contiguous--> published log --> followers
 *                          |  hole or overflow: fill with process/read (planReadMerge)
 *  recovery failed ------> failed (unsequenced, last)
 * ```
 * Past its caps the reorder buffer drops what arrives (memory stays bounded) and marks the
 * session for a fill read: the server retains the output, so nothing is lost by dropping it here.
 */
export class ProcessSession {
  readonly processId: string;
  /** Published events, for replay; woken on every change via `changed`. */
  readonly log: EventLog;
  readonly changed: ChangeSignal = new ChangeSignal();
  /** The process's managed-network side (decider, reported denials); not part of the ordering. */
  readonly network: RemoteProcessNetwork = new RemoteProcessNetwork();
  /** `process/waitingForInput` reports (seq of the last event before the wait); unsequenced. */
  readonly waitingForInput: Emitter<number> = new Emitter<number>();
  readonly #limits: ProcessSessionLimits;
  readonly #pending = new Map<number, SequencedEvent>();
  /** Gaps in the published stream: seq of the first event after each lost range. */
  readonly #gaps: number[] = [];
  #pendingBytes = 0;
  #lastPublished = 0;
  #exitSeen = false;
  #closed = false;
  #failure: string | undefined;
  #dropped = false;
  #dropCount = 0;
  #writeCounter = 0;
  /** `process/start` answered: the process exists on the server. */
  started = false;
  /** `process/start` calls in flight for this id. */
  pendingStarts = 0;

  constructor(processId: string, limits: Partial<ProcessSessionLimits> = {}) {
    this.processId = processId;
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
    this.log = new EventLog({ maxEvents: this.#limits.logEvents, maxBytes: this.#limits.logBytes });
  }

  /** Seq of the last published event (0 before the first). */
  get lastPublished(): number {
    return this.#lastPublished;
  }

  /** `closed` was published: nothing more will come. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The failure message, once the session failed. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Started, not closed, not failed: recovery reads it back after a reconnect. */
  get live(): boolean {
    return this.started && !this.#closed && this.#failure === undefined;
  }

  /** A hole is open (events held back, or dropped past the caps) that only a read may close. */
  get needsFill(): boolean {
    return this.live && (this.#pending.size > 0 || this.#dropped);
  }

  /** Events were dropped past the reorder caps since the last fill: fill at once. */
  get overflowed(): boolean {
    return this.#dropped;
  }

  /** Events dropped so far past the reorder caps (a fill read notes it when sent). */
  get dropCount(): number {
    return this.#dropCount;
  }

  /** Events held in the reorder buffer. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The next per-process write id: `"1"`, `"2"`, ... (reused verbatim when a write is retried). */
  nextWriteId(): string {
    this.#writeCounter += 1;
    return String(this.#writeCounter);
  }

  /** The seq right after the lost range that `seq` ends, if publishing jumped to `seq`. */
  isGapBefore(seq: number): boolean {
    return this.#gaps.includes(seq);
  }

  /** A pushed event: published when it is next, held when early, dropped when old or over the caps. */
  accept(event: SequencedEvent): void {
    if (this.#closed || this.#failure !== undefined) return;
    if (event.seq <= this.#lastPublished || this.#pending.has(event.seq)) return;
    if (event.seq === this.#lastPublished + 1) {
      this.#publish(event);
      this.#drain();
      this.changed.notify();
      return;
    }
    const bytes = eventBytes(event);
    if (
      this.#pending.size >= this.#limits.pendingEvents ||
      this.#pendingBytes + bytes > this.#limits.pendingBytes
    ) {
      this.#dropped = true;
      this.#dropCount += 1;
      return;
    }
    this.#hold(event);
  }

  /**
   * Folds a `process/read` answer (asked with `afterSeq` at most `lastPublished`) into the stream.
   * `dropCountAtRequest` is {@link dropCount} when the read was sent: events dropped after that
   * may be newer than the answer, so the session still needs a fill. Throws a `protocol`
   * ExecError when the answer does not add up (the caller fails the session). Returns the first
   * retained seq when output was lost to the server's retention.
   */
  merge(response: ReadResponse, dropCountAtRequest: number = this.#dropCount): number | undefined {
    if (this.#closed || this.#failure !== undefined) return undefined;
    const plan = planReadMerge(
      {
        processId: this.processId,
        lastPublished: this.#lastPublished,
        pending: this.#pending,
        exitSeen: this.#exitSeen,
      },
      response,
    );
    this.#dropped = this.#dropCount > dropCountAtRequest;
    for (const event of plan.events) {
      const held = this.#pending.get(event.seq);
      if (held !== undefined) this.#pendingBytes -= eventBytes(held);
      this.#hold(event);
    }
    const gap = plan.firstRetainedSeq;
    if (gap !== undefined) {
      for (const [seq, event] of this.#pending) {
        if (seq >= gap) continue;
        this.#pending.delete(seq);
        this.#pendingBytes -= eventBytes(event);
      }
      this.#lastPublished = gap - 1;
      this.#gaps.push(gap);
    }
    this.#drain();
    this.changed.notify();
    return gap;
  }

  /** Fails the session (first message wins); followers get a `failed` event after the log. */
  fail(message: string): void {
    if (this.#closed || this.#failure !== undefined) return;
    this.#failure = message;
    this.#pending.clear();
    this.#pendingBytes = 0;
    this.changed.notify();
  }

  /** The read answer of a failed session (spec §3.5). */
  failureResponse(): ReadResponse {
    return {
      chunks: [],
      nextSeq: this.#lastPublished + 1,
      exited: true,
      exitCode: null,
      closed: true,
      failure: this.#failure ?? null,
      sandboxDenied: false,
    };
  }

  #hold(event: SequencedEvent): void {
    this.#pending.set(event.seq, event);
    this.#pendingBytes += eventBytes(event);
    if (event.type === 'exited') this.#exitSeen = true;
  }

  #drain(): void {
    for (;;) {
      const next = this.#pending.get(this.#lastPublished + 1);
      if (next === undefined || this.#closed) break;
      this.#pending.delete(next.seq);
      this.#pendingBytes -= eventBytes(next);
      this.#publish(next);
    }
    if (this.#closed) {
      this.#pending.clear();
      this.#pendingBytes = 0;
    }
  }

  #publish(event: SequencedEvent): void {
    this.#lastPublished = event.seq;
    if (event.type === 'exited') this.#exitSeen = true;
    if (event.type === 'closed') this.#closed = true;
    this.log.append(event);
  }
}
