import { setTimeout as delay } from 'node:timers/promises';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long (generous: the test machine is slow and shared). Default 20 s. */
  readonly timeoutMs?: number;
  /** Poll interval. Default 10 ms. */
  readonly intervalMs?: number;
  /** Shown in the timeout error. */
  readonly what?: string;
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`, and returns that value.
 * Throws after the deadline with `what` in the message. Never a bare sleep: a bounded wait for a
 * condition.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const deadline = performance.now() + (options.timeoutMs ?? 20_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}`, { cause: lastError });
    }
    await delay(options.intervalMs ?? 10);
  }
}
