import type { Writable } from 'node:stream';

/**
 * How long output frames are collected while a connection streams (output went out less than
 * {@link STREAMING_GAP_MS} before): one socket write, and for a client that asked for them one
 * `process/outputBatch` per process, per window instead of one per chunk read. Output after a
 * quiet spell, a reply, and anything that is not output still leave at the end of the turn.
 */
export const STREAMING_LINGER_MS = 2;

/** Output sent this recently means the connection is streaming (see {@link STREAMING_LINGER_MS}). */
const STREAMING_GAP_MS = 4;

/**
 * One connection's frames collected per turn of the event loop: the raw socket is corked at the
 * first frame and uncorked (after `flush` has written what was held back) once the turn's I/O
 * callbacks and microtasks have run, or, while the connection streams output, after
 * {@link STREAMING_LINGER_MS}. Without a raw socket only the timing (and `flush`) applies.
 */
export class OutboundTurn {
  readonly #raw: Writable | undefined;
  readonly #flush: () => void;
  readonly #uncorked: () => void;
  /** Frames are being collected (the raw socket is corked). */
  #open = false;
  /** The end is due at the next check phase (`setImmediate`). */
  #endsSoon = false;
  /** The end of a lingering turn. */
  #lingerTimer: NodeJS.Timeout | undefined;
  /** When output last left (a turn with output ended); -Infinity before any. */
  #lastOutputMs = Number.NEGATIVE_INFINITY;
  #hasOutput = false;

  /** `flush` writes what was held back; `uncorked` runs after the raw socket was uncorked. */
  constructor(raw: Writable | undefined, flush: () => void, uncorked: () => void = () => {}) {
    this.#raw = raw;
    this.#flush = flush;
    this.#uncorked = uncorked;
  }

  /** Starts collecting, if not already; `output`: the frame is process output (it may linger). */
  begin(output = false): void {
    if (!this.#open) {
      this.#open = true;
      this.#raw?.cork();
    }
    if (output) this.#hasOutput = true;
    if (this.#endsSoon) return;
    // Output while streaming lingers; anything else (a reply, an exit, output after a quiet
    // spell) ends the turn, a lingering one included, at the next check phase.
    if (output && performance.now() - this.#lastOutputMs < STREAMING_GAP_MS) {
      this.#lingerTimer ??= setTimeout(this.#end, STREAMING_LINGER_MS);
      return;
    }
    this.#endsSoon = true;
    setImmediate(this.#end);
  }

  /** Drops a pending linger (the socket closed); idempotent. */
  cancel(): void {
    clearTimeout(this.#lingerTimer);
    this.#lingerTimer = undefined;
  }

  readonly #end = (): void => {
    this.cancel();
    this.#endsSoon = false;
    if (!this.#open) return;
    this.#flush();
    this.#open = false;
    if (this.#hasOutput) this.#lastOutputMs = performance.now();
    this.#hasOutput = false;
    this.#raw?.uncork();
    this.#uncorked();
  };
}
