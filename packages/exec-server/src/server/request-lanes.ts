import { ExecError } from '@execd/protocol';

/**
 * The largest accepted `--concurrent-requests`. The original clamps to tokio's semaphore maximum;
 * beyond a few thousand in-flight requests per lane a connection is misbehaving, so execd clamps here.
 */
export const MAX_CONCURRENT_REQUESTS = 65_536;

/** How requests of one connection run after `initialized` (spec §2.6). */
export type DispatchMode =
  | { readonly kind: 'inline' }
  | { readonly kind: 'concurrent'; readonly limit: number };

/**
 * Parses `--concurrent-requests` as the original: a positive integer; `1` is inline (sequential
 * in arrival order), `N >= 2` is N permits per lane, clamped to {@link MAX_CONCURRENT_REQUESTS}.
 */
export function parseDispatchMode(value: string | number): DispatchMode {
  const text = String(value).trim();
  if (!/^\+?[0-9]+$/.test(text)) {
    throw new ExecError(
      'invalidParams',
      `invalid --concurrent-requests value \`${value}\`: expected a positive integer`,
    );
  }
  const count = Number(text.replace(/^\+/, ''));
  if (count === 0) {
    throw new ExecError(
      'invalidParams',
      `invalid --concurrent-requests value \`${value}\`: must be at least 1`,
    );
  }
  if (count === 1) return { kind: 'inline' };
  return { kind: 'concurrent', limit: Math.min(count, MAX_CONCURRENT_REQUESTS) };
}

/**
 * A FIFO semaphore: at most `limit` tasks run at once, the rest wait in arrival order. A task
 * whose `cancelSignal` fired before it got a permit is dropped without running.
 */
export class RequestLane {
  readonly #limit: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`lane limit must be a positive integer, got ${limit}`);
    this.#limit = limit;
  }

  /** Tasks admitted and not yet settled. */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting for a permit. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` once a permit is free; resolves when it settles (never rejects: tasks own their errors). */
  async run(task: () => Promise<void>, cancelSignal?: AbortSignal): Promise<void> {
    if (this.#running >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      if (!cancelSignal?.aborted) await task();
    } catch {
      // Tasks report their own failures; a lane only bounds concurrency.
    } finally {
      const next = this.#waiting.shift();
      // Hand the permit straight to the next waiter so arrival order is kept.
      if (next) next();
      else this.#running--;
    }
  }
}
