/** When a {@link HeapReclaimer} collects (see its options for the defaults). */
export interface HeapReclaimerOptions {
  /** Runs a full garbage collection, synchronously. */
  readonly collect: () => void;
  /** Frames of at least this many bytes count (default 64 KiB). */
  readonly largeFrameBytes?: number;
  /** Collect once large frames of this many bytes arrived since the last collection (default 4 MiB). */
  readonly collectAfterBytes?: number;
  /** Never collect more often than this (default 50 ms). */
  readonly minIntervalMs?: number;
  /**
   * Share of the time these collections may take (default 0.1): after a pause of P ms the next
   * one waits at least P / share ms. Bounds the cost of steady bulk input.
   */
  readonly maxPauseShare?: number;
  /** Called after each collection with how long it took. */
  readonly onCollected?: (pauseMs: number) => void;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** Counters of a {@link HeapReclaimer}. */
export interface HeapReclaimerStats {
  readonly collections: number;
  readonly pauseMs: number;
  /** Large-frame bytes seen since the last collection. */
  readonly pendingBytes: number;
}

export const LARGE_FRAME_BYTES: number = 64 * 1024;
export const COLLECT_AFTER_BYTES: number = 4 * 1024 * 1024;
export const MIN_COLLECT_INTERVAL_MS: number = 50;
export const MAX_PAUSE_SHARE: number = 0.1;

/**
 * Collects the heap after bursts of large inbound frames. A large frame is parsed into strings
 * and objects that V8 places in its large-object spaces; when such frames are refused (hostile
 * input, a client bug) all of it is garbage at once, and V8, which collects the old generation
 * only once it has grown by a factor, lets a burst of them grow the heap (and RSS) by tens of
 * megabytes before it looks. A full collection of the server's small live heap takes a few
 * milliseconds; it runs on its own turn of the event loop, never inside a frame's handler, at
 * most once per `minIntervalMs`, and spaced so that collections take at most `maxPauseShare` of
 * the time. While one is `due`, the listener holds large frames back (`PartialFrameBudget`), so
 * a flood of them cannot outrun the collections.
 */
export class HeapReclaimer {
  readonly #collect: () => void;
  readonly #largeFrameBytes: number;
  readonly #collectAfterBytes: number;
  readonly #minIntervalMs: number;
  readonly #maxPauseShare: number;
  #lastPauseMs = 0;
  readonly #onCollected: ((pauseMs: number) => void) | undefined;
  readonly #now: () => number;
  #pendingBytes = 0;
  #lastCollectedAt = Number.NEGATIVE_INFINITY;
  #scheduled: NodeJS.Immediate | NodeJS.Timeout | undefined;
  #collections = 0;
  #pauseMs = 0;
  #closed = false;

  constructor(options: HeapReclaimerOptions) {
    this.#collect = options.collect;
    this.#largeFrameBytes = options.largeFrameBytes ?? LARGE_FRAME_BYTES;
    this.#collectAfterBytes = options.collectAfterBytes ?? COLLECT_AFTER_BYTES;
    this.#minIntervalMs = options.minIntervalMs ?? MIN_COLLECT_INTERVAL_MS;
    this.#maxPauseShare = options.maxPauseShare ?? MAX_PAUSE_SHARE;
    this.#onCollected = options.onCollected;
    this.#now = options.now ?? (() => performance.now());
  }

  /** A collection is due: large frames arrived since the last one (it may be waiting its turn). */
  get due(): boolean {
    return !this.#closed && this.#pendingBytes >= this.#collectAfterBytes;
  }

  /** An inbound frame of `bytes` arrived (any codec, any transport). */
  noteFrame(bytes: number): void {
    if (this.#closed || bytes < this.#largeFrameBytes) return;
    this.#pendingBytes += bytes;
    if (this.#pendingBytes < this.#collectAfterBytes || this.#scheduled !== undefined) return;
    const interval = Math.max(this.#minIntervalMs, this.#lastPauseMs / this.#maxPauseShare);
    const wait = this.#lastCollectedAt + interval - this.#now();
    this.#scheduled =
      wait > 0 ? setTimeout(() => this.#run(), wait).unref() : setImmediate(() => this.#run()).unref();
  }

  stats(): HeapReclaimerStats {
    return { collections: this.#collections, pauseMs: this.#pauseMs, pendingBytes: this.#pendingBytes };
  }

  /** Cancels a scheduled collection; later frames are ignored (idempotent). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#scheduled as NodeJS.Timeout | undefined);
    clearImmediate(this.#scheduled as NodeJS.Immediate | undefined);
    this.#scheduled = undefined;
  }

  #run(): void {
    this.#scheduled = undefined;
    if (this.#closed) return;
    const started = this.#now();
    this.#collect();
    const pauseMs = this.#now() - started;
    this.#lastCollectedAt = this.#now();
    this.#pendingBytes = 0;
    this.#collections += 1;
    this.#pauseMs += pauseMs;
    this.#lastPauseMs = pauseMs;
    this.#onCollected?.(pauseMs);
  }
}
