import { probeInputWait } from './input-wait.ts';

/**
 * Quiet time after the last output or input before the terminal is probed: a program answering
 * a line writes its answer and its next prompt within a few milliseconds, and the reader must
 * have taken every byte from the terminal before "waiting" is believed. 25 ms keeps a REPL round
 * trip well under 100 ms.
 */
export const INPUT_WAIT_SETTLE_MS = 25;

/**
 * Longest pause between two probes of a terminal that is not waiting (the interval doubles from
 * the settle time up to this): a program that computes for minutes costs two /proc looks a second.
 */
export const INPUT_WAIT_MAX_PROBE_INTERVAL_MS = 500;

/**
 * How long after the last output or input a silent terminal is still probed. Past it the watcher
 * rests until the next activity (a program that starts reading after ten silent minutes is then
 * only noticed at the caller's deadline, as without detection).
 */
export const INPUT_WAIT_ACTIVE_WINDOW_MS = 60_000;

/** Options of {@link InputWaitWatcher}. */
export interface InputWaitWatcherOptions {
  /** Told each time the terminal starts waiting for input (once per quiet period). */
  readonly onWaiting: () => void;
  /** Quiet time before a probe (default {@link INPUT_WAIT_SETTLE_MS}). */
  readonly settleMs?: number | undefined;
  /** Probes a pid (default {@link probeInputWait}). */
  readonly probe?: typeof probeInputWait | undefined;
}

/**
 * Follows one PTY child and says when its terminal starts waiting for input: after every output
 * chunk or write (`activity`) it waits for {@link INPUT_WAIT_SETTLE_MS} of quiet, then probes
 * /proc, backing off while the program computes or sleeps. A probe overtaken by new activity is
 * discarded, so "waiting" is only ever reported for the state after the latest output and input.
 */
export class InputWaitWatcher implements Disposable {
  readonly #pid: number;
  readonly #onWaiting: () => void;
  readonly #settleMs: number;
  readonly #probe: typeof probeInputWait;
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  #lastActivity = 0;
  #waiting = false;
  #disposed = false;

  constructor(pid: number, options: InputWaitWatcherOptions) {
    this.#pid = pid;
    this.#onWaiting = options.onWaiting;
    this.#settleMs = options.settleMs ?? INPUT_WAIT_SETTLE_MS;
    this.#probe = options.probe ?? probeInputWait;
    this.activity();
  }

  /** True from a `waiting` probe until the next activity. */
  get waiting(): boolean {
    return this.#waiting;
  }

  /** Output was read, or input written: not waiting any more; probe again after the quiet time. */
  activity(): void {
    if (this.#disposed) return;
    this.#generation += 1;
    this.#waiting = false;
    this.#lastActivity = performance.now();
    this.#schedule(this.#settleMs);
  }

  #schedule(delayMs: number): void {
    clearTimeout(this.#timer);
    const generation = this.#generation;
    this.#timer = setTimeout(() => void this.#run(generation, delayMs), delayMs);
    // A watcher never keeps the process alive.
    this.#timer.unref();
  }

  async #run(generation: number, delayMs: number): Promise<void> {
    this.#timer = undefined;
    const reason = await this.#probe(this.#pid).catch(() => 'unknown' as const);
    if (this.#disposed || generation !== this.#generation) return;
    if (reason === 'waiting') {
      // One more turn of the event loop: output the program wrote before it blocked, still in
      // the terminal's buffer, is read first (and, as activity, cancels this report).
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#disposed || generation !== this.#generation) return;
      this.#waiting = true;
      this.#onWaiting();
      return;
    }
    if (reason === 'unknown') return;
    if (performance.now() - this.#lastActivity > INPUT_WAIT_ACTIVE_WINDOW_MS) return;
    this.#schedule(Math.min(delayMs * 2, INPUT_WAIT_MAX_PROBE_INTERVAL_MS));
  }

  /** Stops probing. Idempotent. */
  [Symbol.dispose](): void {
    this.#disposed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
