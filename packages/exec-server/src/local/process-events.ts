import type { OutputStream } from '@execd/protocol';
import { EventLog, type EventLogLimits, type SequencedEvent } from '@execd/protocol/contract';
import { RetainedOutput, type RetentionLimits } from './retained-output.ts';

/**
 * The sequenced events of one process: one seq counter, from 1, numbers output chunks, the exit
 * and the close, in emission order. Output is retained (bounded) for `process/read`; every event
 * also goes to the replay history for in-process `events()`.
 */
export class ProcessEvents {
  /** Replay history for in-process `events()`; outlives the table entry. */
  readonly history: EventLog;
  /** The retained output chunks, for `process/read` pages and the sandbox denial check. */
  readonly output: RetainedOutput;
  #nextSeq = 1;
  #exitEvent: SequencedEvent | undefined;
  #closedEvent: SequencedEvent | undefined;

  constructor(retention: RetentionLimits, history: EventLogLimits) {
    this.output = new RetainedOutput(retention);
    this.history = new EventLog(history);
  }

  /** The seq the next event takes. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Records one output chunk; returns its seq. */
  recordOutput(stream: OutputStream, chunk: Uint8Array): number {
    const seq = this.#takeSeq();
    this.output.push(seq, stream, chunk);
    this.history.append({ type: 'output', seq, stream, chunk });
    return seq;
  }

  /** Records the exit; returns its seq. */
  recordExit(exitCode: number, sandboxDenied: boolean): number {
    const seq = this.#takeSeq();
    this.#exitEvent = { type: 'exited', seq, exitCode, sandboxDenied };
    this.history.append(this.#exitEvent);
    return seq;
  }

  /** Records the close; returns its seq. */
  recordClosed(): number {
    const seq = this.#takeSeq();
    this.#closedEvent = { type: 'closed', seq };
    this.history.append(this.#closedEvent);
    return seq;
  }

  /**
   * Every event after `afterSeq` still known: the replay history, or (when the cursor is older
   * than the history) the retained output merged with the exit and close events.
   * `firstRetainedSeq` is set when events after `afterSeq` were evicted from both.
   */
  eventsAfter(afterSeq: number): { events: SequencedEvent[]; firstRetainedSeq: number | undefined } {
    if (!this.history.hasGapAfter(afterSeq))
      return { events: this.history.after(afterSeq), firstRetainedSeq: undefined };
    const events: SequencedEvent[] = this.output
      .after(afterSeq)
      .map((chunk) => ({ type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk }));
    for (const event of [this.#exitEvent, this.#closedEvent]) {
      if (event !== undefined && event.seq > afterSeq) events.push(event);
    }
    events.sort((a, b) => a.seq - b.seq);
    const gap = afterSeq < this.output.lastEvictedSeq;
    return { events, firstRetainedSeq: gap ? (this.output.firstSeq ?? this.#nextSeq) : undefined };
  }

  #takeSeq(): number {
    const seq = this.#nextSeq;
    this.#nextSeq += 1;
    return seq;
  }
}
