import type { ExecProcessEvent } from './exec-process.ts';

/** A sequenced event (`failed` is client-synthesised and never logged here). */
export type SequencedEvent = Exclude<ExecProcessEvent, { type: 'failed' }>;

/** Limits of an EventLog. */
export interface EventLogLimits {
  readonly maxEvents: number;
  readonly maxBytes: number;
}

/**
 * The replay history behind `events()` (in-process, and in the remote client): the newest events
 * of one process, bounded by event count and by output bytes, oldest evicted first (the newest
 * event is always kept).
 */
export class EventLog {
  readonly #limits: EventLogLimits;
  // From `#head` on; an evicted slot is emptied at once (an output event's chunk keeps its whole
  // buffer alive), the dead prefix is dropped once it dominates.
  #items: (SequencedEvent | undefined)[] = [];
  #head = 0;
  #bytes = 0;
  #lastEvictedSeq = 0;

  constructor(limits: EventLogLimits) {
    this.#limits = limits;
  }

  /** Seq of the newest evicted event (0 when nothing was evicted). */
  get lastEvictedSeq(): number {
    return this.#lastEvictedSeq;
  }

  /** Seq of the newest event, or 0. */
  get lastSeq(): number {
    return this.#items.at(-1)?.seq ?? 0;
  }

  /** Seq of the oldest kept event, if any. */
  get firstSeq(): number | undefined {
    return this.#items[this.#head]?.seq;
  }

  /** Appends an event (seqs must increase), then evicts to the limits. */
  append(event: SequencedEvent): void {
    this.#items.push(event);
    this.#bytes += eventBytes(event);
    while (
      this.#items.length - this.#head > 1 &&
      (this.#bytes > this.#limits.maxBytes || this.#items.length - this.#head > this.#limits.maxEvents)
    ) {
      const evicted = this.#items[this.#head]!;
      this.#items[this.#head] = undefined;
      this.#head += 1;
      this.#bytes -= eventBytes(evicted);
      this.#lastEvictedSeq = evicted.seq;
    }
    if (this.#head > 256 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  /** True when an event with `seq > afterSeq` was evicted (a replay from there has a gap). */
  hasGapAfter(afterSeq: number): boolean {
    return afterSeq < this.#lastEvictedSeq;
  }

  /** Kept events with `seq > afterSeq`, oldest first. */
  after(afterSeq: number): SequencedEvent[] {
    const out: SequencedEvent[] = [];
    for (let i = this.#head; i < this.#items.length; i++) {
      const event = this.#items[i]!;
      if (event.seq > afterSeq) out.push(event);
    }
    return out;
  }
}

function eventBytes(event: SequencedEvent): number {
  return event.type === 'output' ? event.chunk.byteLength : 0;
}
