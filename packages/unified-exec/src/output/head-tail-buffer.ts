import { UNIFIED_EXEC_OUTPUT_MAX_BYTES } from '../constants.ts';

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();

/** The line put between head and tail when bytes were dropped: `... {n} bytes omitted ...`. */
export function formatOutputOmissionMarker(omittedBytes: number): string {
  return `... ${omittedBytes} bytes omitted ...`;
}

/**
 * A capped output buffer that keeps a stable prefix ("head") and the newest suffix ("tail"),
 * dropping the middle once more than `maxBytes` arrived. Half of the capacity goes to the head
 * (`floor(max/2)`), the rest to the tail, as the original's `HeadTailBuffer`.
 *
 * Storage is two contiguous byte arrays (the tail is a ring), so millions of tiny chunks cost
 * no per-chunk metadata.
 */
export class HeadTailBuffer {
  readonly #maxBytes: number;
  readonly #headBudget: number;
  readonly #tailBudget: number;
  #head: Uint8Array = EMPTY;
  #headLen = 0;
  #tail: Uint8Array = EMPTY;
  #tailStart = 0;
  #tailLen = 0;
  #omitted = 0;

  /** @param maxBytes retained bytes at most (head + tail); 1 MiB by default. */
  constructor(maxBytes: number = UNIFIED_EXEC_OUTPUT_MAX_BYTES) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`HeadTailBuffer maxBytes must be a non-negative integer, got ${maxBytes}`);
    }
    this.#maxBytes = maxBytes;
    this.#headBudget = Math.floor(maxBytes / 2);
    this.#tailBudget = maxBytes - this.#headBudget;
  }

  /** The capacity given to the constructor. */
  get maxBytes(): number {
    return this.#maxBytes;
  }

  /** Bytes currently held (head + tail). */
  get retainedBytes(): number {
    return this.#headLen + this.#tailLen;
  }

  /** Bytes dropped from the middle because of the cap. */
  get omittedBytes(): number {
    return this.#omitted;
  }

  /** Every byte ever pushed: retained plus omitted. */
  get totalBytes(): number {
    return this.retainedBytes + this.#omitted;
  }

  /** Appends bytes: the head fills first, then the tail keeps the newest `tailBudget` bytes. */
  pushChunk(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.#maxBytes === 0) {
      this.#omitted += chunk.length;
      return;
    }
    // Once a gap exists the head is closed: bytes after the gap must never join the prefix.
    const room = this.#omitted > 0 ? 0 : this.#headBudget - this.#headLen;
    const toHead = Math.min(room, chunk.length);
    if (toHead > 0) this.#appendHead(chunk.subarray(0, toHead));
    if (toHead < chunk.length) this.#pushTail(chunk.subarray(toHead));
  }

  /**
   * Appends another buffer's content as if its original chunks were pushed here: its head,
   * then its omitted middle (which closes this head and evicts older tail bytes), then its tail.
   */
  pushBuffer(other: HeadTailBuffer): void {
    // Copy first: `other` may be this very buffer, whose storage pushChunk rewrites.
    const [head, tail] = other.#parts().map((part) => part.slice()) as [Uint8Array, Uint8Array];
    const otherOmitted = other.#omitted;
    this.pushChunk(head);
    if (otherOmitted > 0) {
      this.#omitted += otherOmitted + this.#tailLen;
      this.#tailStart = 0;
      this.#tailLen = 0;
    }
    this.pushChunk(tail);
  }

  /** The retained chunks, head first then tail, without empty ones. */
  snapshotChunks(): Uint8Array[] {
    return this.#parts()
      .filter((part) => part.length > 0)
      .map((part) => part.slice());
  }

  /** Head followed by tail; omitted bytes are not represented. */
  toBytes(): Uint8Array {
    const [head, tail] = this.#parts();
    const out = new Uint8Array(head.length + tail.length);
    out.set(head, 0);
    out.set(tail, head.length);
    return out;
  }

  /** Head, then `"\n... {n} bytes omitted ...\n"` when bytes were dropped, then tail. */
  toBytesWithOmissionMarker(): Uint8Array {
    if (this.#omitted === 0) return this.toBytes();
    const [head, tail] = this.#parts();
    const marker = encoder.encode(`\n${formatOutputOmissionMarker(this.#omitted)}\n`);
    const out = new Uint8Array(head.length + marker.length + tail.length);
    out.set(head, 0);
    out.set(marker, head.length);
    out.set(tail, head.length + marker.length);
    return out;
  }

  /** Returns the retained chunks (head, tail) and resets the buffer, omitted count included. */
  drainChunks(): Uint8Array[] {
    const chunks = this.snapshotChunks();
    this.clear();
    return chunks;
  }

  /** Forgets everything. */
  clear(): void {
    this.#head = EMPTY;
    this.#headLen = 0;
    this.#tail = EMPTY;
    this.#tailStart = 0;
    this.#tailLen = 0;
    this.#omitted = 0;
  }

  #parts(): [Uint8Array, Uint8Array] {
    const head = this.#head.subarray(0, this.#headLen);
    const end = this.#tailStart + this.#tailLen;
    if (end <= this.#tail.length) return [head, this.#tail.subarray(this.#tailStart, end)];
    const tail = new Uint8Array(this.#tailLen);
    const first = this.#tail.subarray(this.#tailStart);
    tail.set(first, 0);
    tail.set(this.#tail.subarray(0, end - this.#tail.length), first.length);
    return [head, tail];
  }

  #appendHead(bytes: Uint8Array): void {
    const needed = this.#headLen + bytes.length;
    if (needed > this.#head.length) {
      const grown = new Uint8Array(Math.min(this.#headBudget, Math.max(needed, this.#head.length * 2, 256)));
      grown.set(this.#head.subarray(0, this.#headLen));
      this.#head = grown;
    }
    this.#head.set(bytes, this.#headLen);
    this.#headLen = needed;
  }

  #pushTail(bytes: Uint8Array): void {
    if (this.#tailBudget === 0) {
      this.#omitted += bytes.length;
      return;
    }
    if (bytes.length >= this.#tailBudget) {
      // Larger than the whole tail: only its last tailBudget bytes survive.
      const kept = bytes.subarray(bytes.length - this.#tailBudget);
      this.#omitted += this.#tailLen + (bytes.length - kept.length);
      this.#tail = kept.slice();
      this.#tailStart = 0;
      this.#tailLen = kept.length;
      return;
    }
    this.#reserveTail(Math.min(this.#tailBudget, this.#tailLen + bytes.length));
    const excess = this.#tailLen + bytes.length - this.#tailBudget;
    if (excess > 0) {
      this.#tailStart = (this.#tailStart + excess) % this.#tail.length;
      this.#tailLen -= excess;
      this.#omitted += excess;
    }
    const capacity = this.#tail.length;
    const writeAt = (this.#tailStart + this.#tailLen) % capacity;
    const firstPart = Math.min(bytes.length, capacity - writeAt);
    this.#tail.set(bytes.subarray(0, firstPart), writeAt);
    if (firstPart < bytes.length) this.#tail.set(bytes.subarray(firstPart), 0);
    this.#tailLen += bytes.length;
  }

  /** Grows the tail ring (linearising it) so that it can hold `needed` bytes. */
  #reserveTail(needed: number): void {
    if (needed <= this.#tail.length) return;
    const capacity = Math.min(this.#tailBudget, Math.max(needed, this.#tail.length * 2, 256));
    const [, current] = this.#parts();
    const grown = new Uint8Array(capacity);
    grown.set(current, 0);
    this.#tail = grown;
    this.#tailStart = 0;
  }
}
