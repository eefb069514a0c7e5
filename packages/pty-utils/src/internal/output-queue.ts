import { ExecError } from '@execd/protocol';
import { MAX_CHUNK_BYTES, OUTPUT_HIGH_WATER_BYTES, OUTPUT_LOW_WATER_BYTES } from '../constants.ts';
import type { OutputChunk, OutputStreamName } from '../types.ts';

/** Buffer compaction threshold: drop consumed slots once this many have piled up at the front. */
const COMPACT_AFTER_CHUNKS = 4096;

/** Watermarks of an `OutputQueue` (bytes buffered but not yet taken by the consumer). */
export interface OutputQueueOptions {
  readonly highWaterBytes?: number | undefined;
  readonly lowWaterBytes?: number | undefined;
  /** Called with `true` when the buffer crosses the high mark, `false` when it falls to the low mark. */
  readonly onPressure: (paused: boolean) => void;
}

/**
 * The single-consumer output buffer of one child: chunks from every stream in arrival order, split
 * to at most `MAX_CHUNK_BYTES` (views, no copies), with high/low watermark backpressure signals.
 * If the consumer stops iterating early, later output is discarded and pressure is released.
 */
export class OutputQueue {
  readonly #high: number;
  readonly #low: number;
  readonly #onPressure: (paused: boolean) => void;
  #chunks: (OutputChunk | undefined)[] = [];
  #head = 0;
  #bytes = 0;
  #paused = false;
  #ended = false;
  #discarding = false;
  #consumerAttached = false;
  #wake: (() => void) | undefined;

  constructor(options: OutputQueueOptions) {
    this.#high = options.highWaterBytes ?? OUTPUT_HIGH_WATER_BYTES;
    this.#low = options.lowWaterBytes ?? OUTPUT_LOW_WATER_BYTES;
    this.#onPressure = options.onPressure;
  }

  /** Bytes buffered and not yet taken. */
  get bufferedBytes(): number {
    return this.#bytes;
  }

  /** Appends one read from `stream`; ignored after `end()` or once the consumer has left. */
  push(stream: OutputStreamName, bytes: Uint8Array): void {
    if (this.#ended || this.#discarding || bytes.length === 0) return;
    if (bytes.length <= MAX_CHUNK_BYTES) {
      this.#chunks.push({ stream, bytes });
    } else {
      for (let at = 0; at < bytes.length; at += MAX_CHUNK_BYTES) {
        this.#chunks.push({ stream, bytes: bytes.subarray(at, at + MAX_CHUNK_BYTES) });
      }
    }
    this.#bytes += bytes.length;
    if (!this.#paused && this.#bytes >= this.#high) {
      this.#paused = true;
      this.#onPressure(true);
    }
    this.#notify();
  }

  /** No more chunks will come; the consumer finishes after the buffered ones. Idempotent. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The consumer's iterator. Throws `unsupported` when called a second time. */
  consume(): AsyncIterable<OutputChunk> {
    if (this.#consumerAttached)
      throw new ExecError('unsupported', 'output() has a single consumer and was already called');
    this.#consumerAttached = true;
    return this.#iterate();
  }

  async *#iterate(): AsyncGenerator<OutputChunk, void, undefined> {
    try {
      for (;;) {
        const chunk = this.#take();
        if (chunk !== undefined) {
          yield chunk;
        } else if (this.#ended) {
          return;
        } else {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
          });
        }
      }
    } finally {
      // The consumer left (or everything was delivered): stop buffering and never hold the child.
      this.#discarding = true;
      this.#chunks = [];
      this.#head = 0;
      this.#bytes = 0;
      this.#release();
    }
  }

  #take(): OutputChunk | undefined {
    if (this.#head >= this.#chunks.length) return undefined;
    const chunk = this.#chunks[this.#head];
    this.#chunks[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#chunks.length) {
      this.#chunks.length = 0;
      this.#head = 0;
    } else if (this.#head >= COMPACT_AFTER_CHUNKS) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
    if (chunk !== undefined) {
      this.#bytes -= chunk.bytes.length;
      if (this.#bytes <= this.#low) this.#release();
    }
    return chunk;
  }

  #release(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#onPressure(false);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
