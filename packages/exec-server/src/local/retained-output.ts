import type { OutputStream, ProcessOutputChunk } from '@execd/protocol';

/** One retained chunk; `chunk` is shared, never copied. */
export type RetainedChunk = ProcessOutputChunk;

/** Limits of a RetainedOutput. */
export interface RetentionLimits {
  readonly maxBytes: number;
  readonly maxChunks: number;
}

/** A page of retained output, as `process/read` returns it. */
export interface OutputPage {
  readonly chunks: RetainedChunk[];
  /** Seq of the oldest retained chunk when output after `afterSeq` was evicted, else undefined. */
  readonly firstRetainedSeq: number | undefined;
}

/**
 * The seq-numbered output of one process, bounded by bytes and by chunk count; the oldest chunks
 * are evicted first (the newest chunk is always kept). Seqs increase but need not be contiguous:
 * exit and close events take seqs too.
 */
export class RetainedOutput {
  readonly #limits: RetentionLimits;
  // A queue as an array plus a head index; compacted when the dead prefix dominates. An evicted
  // slot is emptied at once: its chunk (a view that keeps its whole read buffer alive) must not
  // wait for the compaction, which let ~1,000 evicted 8 KiB chunks (~8 MiB) stay per process.
  #items: (RetainedChunk | undefined)[] = [];
  #head = 0;
  #bytes = 0;
  #lastEvictedSeq = 0;

  constructor(limits: RetentionLimits) {
    this.#limits = limits;
  }

  /** Retained bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Retained chunk count. */
  get count(): number {
    return this.#items.length - this.#head;
  }

  /** Seq of the newest evicted chunk (0 when nothing was evicted). */
  get lastEvictedSeq(): number {
    return this.#lastEvictedSeq;
  }

  /** Seq of the oldest retained chunk, if any. */
  get firstSeq(): number | undefined {
    return this.#items[this.#head]?.seq;
  }

  /** Appends a chunk (its seq must exceed every retained seq), then evicts to the limits. */
  push(seq: number, stream: OutputStream, chunk: Uint8Array): void {
    this.#items.push({ seq, stream, chunk });
    this.#bytes += chunk.byteLength;
    while (this.count > 1 && (this.#bytes > this.#limits.maxBytes || this.count > this.#limits.maxChunks)) {
      const evicted = this.#items[this.#head]!;
      this.#items[this.#head] = undefined;
      this.#head += 1;
      this.#bytes -= evicted.chunk.byteLength;
      this.#lastEvictedSeq = evicted.seq;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Every retained chunk with `seq > afterSeq`, oldest first. */
  after(afterSeq: number): RetainedChunk[] {
    // From the head on every slot is filled.
    return this.#items.slice(this.#indexAfter(afterSeq)) as RetainedChunk[];
  }

  /**
   * The `process/read` page: chunks with `seq > afterSeq` in order, stopping before a chunk that
   * would push the total past `maxBytes` (unless the page is empty: the first chunk is always
   * returned whole) and after a chunk that brings the total to `maxBytes` or more.
   */
  page(afterSeq: number, maxBytes: number): OutputPage {
    const chunks: RetainedChunk[] = [];
    let total = 0;
    for (let i = this.#indexAfter(afterSeq); i < this.#items.length; i++) {
      const item = this.#items[i]!;
      if (chunks.length > 0 && total + item.chunk.byteLength > maxBytes) break;
      chunks.push(item);
      total += item.chunk.byteLength;
      if (total >= maxBytes) break;
    }
    const gap = afterSeq < this.#lastEvictedSeq;
    return { chunks, firstRetainedSeq: gap ? this.firstSeq : undefined };
  }

  #indexAfter(afterSeq: number): number {
    let low = this.#head;
    let high = this.#items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#items[mid]!.seq <= afterSeq) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
