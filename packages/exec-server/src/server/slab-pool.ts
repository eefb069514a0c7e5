/**
 * Slab memory the socket has finished with, kept for the next slab any connection takes. A slab
 * taken fresh is memory the process has not touched: on the 2-core VM, 200 JSON clients
 * streaming 870 MB took ~1 GiB of new slabs, and the kernel zeroing their pages on first write
 * was 21 % of the server's samples. Only the sizes a streaming connection takes are kept, up to
 * `maxBytesPerSize` of each; all of it is let go once no slab was taken for `idleMs`.
 */
export class SlabPool {
  readonly #sizes: readonly number[];
  readonly #free = new Map<number, Buffer[]>();
  readonly #maxBytesPerSize: number;
  readonly #idleMs: number;
  #bytes = 0;
  #takenSinceCheck = false;
  #idleTimer: NodeJS.Timeout | undefined;

  /** `sizes`: the slab sizes kept. */
  constructor(sizes: readonly number[], maxBytesPerSize: number, idleMs: number) {
    this.#sizes = [...sizes].sort((a, b) => a - b);
    this.#maxBytesPerSize = maxBytesPerSize;
    this.#idleMs = idleMs;
  }

  /** The smallest kept size that holds `bytes`, or undefined when none does. */
  sizeFor(bytes: number): number | undefined {
    return this.#sizes.find((size) => size >= bytes);
  }

  /** Bytes kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * A slab of at least `size` bytes, its contents anything: a kept one of that size, else a kept
   * larger one, else a new one of the smallest kept size that holds `size` (so that it can be
   * kept in turn), or of `size` when none does.
   */
  take(size: number): Buffer {
    this.#takenSinceCheck = true;
    for (const kept of this.#sizes) {
      if (kept < size) continue;
      const slab = this.#free.get(kept)?.pop();
      if (slab === undefined) continue;
      this.#bytes -= kept;
      return slab;
    }
    return Buffer.allocUnsafeSlow(this.sizeFor(size) ?? size);
  }

  /** Keeps `slab` for a later `take`, if it is of a kept size and there is room; else lets it go. */
  give(slab: Buffer): void {
    const size = slab.byteLength;
    if (!this.#sizes.includes(size) || slab.byteOffset !== 0 || slab.buffer.byteLength !== size) return;
    const free = this.#free.get(size) ?? [];
    if ((free.length + 1) * size > this.#maxBytesPerSize) return;
    this.#free.set(size, free);
    free.push(slab);
    this.#bytes += size;
    if (this.#idleTimer === undefined) {
      this.#takenSinceCheck = false;
      this.#idleTimer = setTimeout(this.#checkIdle, this.#idleMs);
      this.#idleTimer.unref();
    }
  }

  /** Lets every kept slab go. */
  clear(): void {
    this.#free.clear();
    this.#bytes = 0;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  readonly #checkIdle = (): void => {
    this.#idleTimer = undefined;
    if (!this.#takenSinceCheck) {
      this.clear();
      return;
    }
    this.#takenSinceCheck = false;
    this.#idleTimer = setTimeout(this.#checkIdle, this.#idleMs);
    this.#idleTimer.unref();
  };
}

/** Most slab memory kept for reuse per slab size, across all connections of the process. */
export const MAX_POOLED_BYTES_PER_SIZE: number = 4 * 1024 * 1024;

/** Kept slabs are let go after this long without a slab taken (the output stopped). */
export const POOL_IDLE_MS = 2_000;
