import { setTimeout as delay } from 'node:timers/promises';

/**
 * How long {@link waitFor} waits by default. Generous: the test machine has 2 cores and runs
 * other suites at the same time; a condition that holds returns at once, so only failures pay it.
 */
export const WAIT_FOR_TIMEOUT_MS = 20_000;

/** How often {@link waitFor} polls by default: short enough not to slow a test down. */
export const WAIT_FOR_INTERVAL_MS = 10;

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. Default {@link WAIT_FOR_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** Pause between two polls. Default {@link WAIT_FOR_INTERVAL_MS}. */
  readonly intervalMs?: number;
  /** What is awaited, for the timeout error: `timed out waiting for <what>`. */
  readonly what?: string;
}

/** What {@link waitFor} resolves with: the predicate's value once it is truthy. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `predicate` until it returns (or resolves to) a truthy value and resolves with that
 * value. A predicate that throws counts as "not yet" (a socket not listening yet, a /proc entry
 * that just vanished); the last error becomes the `cause` of the timeout error.
 *
 * The one way a test waits for something that has no event: deadline-bounded, never a bare sleep
 * (house style rule 31).
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Truthy<T>> {
  const {
    timeoutMs = WAIT_FOR_TIMEOUT_MS,
    intervalMs = WAIT_FOR_INTERVAL_MS,
    what = 'a condition',
  } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as Truthy<T>;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const last = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out waiting for ${what} after ${timeoutMs} ms${last}`, { cause: lastError });
    }
    await delay(intervalMs);
  }
}
