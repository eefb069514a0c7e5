import { setTimeout as delay } from 'node:timers/promises';

/** Options of `waitFor`. */
export interface WaitForOptions {
  /** Give up after this long (generous: the machine is shared and slow). */
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  readonly what?: string;
}

/**
 * Polls `predicate` until it returns a truthy value (returned) or the deadline passes (throws).
 * The only way tests wait for something that has no event.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  { timeoutMs = 20_000, intervalMs = 10, what = 'condition' }: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not reached within ${timeoutMs} ms`);
    await delay(intervalMs);
  }
}
